//! A leak the writer claims (`there is a memory leak`, `it keeps leaking memory`,
//! `Memory leak when …`), read apart from the other claims for the words that assert
//! one: who says it, the verb after it, a title it opens.

use std::sync::OnceLock;

use regex::Regex;

use super::super::prose::matches;
use super::claims::{claim, claim_stands, sentence_of};

/// A leak the writer claims: `there is a memory leak`, `I noticed lots of memory leaks`,
/// `Memory leak when …` opening a sentence, `grosse fuite mémoire`. Not a leak denied,
/// supposed, avoided or fixed (`no memory leak`, `if you have a memory leak`, `fixed a
/// memory leak`), asked about (`do I have a memory leak?`), hinted at by a program
/// (`this may indicate a memory leak`), nor one a page teaches about (`memory leaks
/// are a common cause`).
#[allow(clippy::ptr_arg)]
pub(super) fn extract_leak_claim(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    // Node's warning about listeners added to one emitter names a leak it only
    // suspects from their count (`MaxListenersExceededWarning: Possible EventEmitter
    // memory leak detected`): no memory was measured.
    if msg.contains("EventEmitter memory leak") || !claim_stands(msg, out) {
        return false;
    }
    let Some(claim) = claim(out) else {
        return false;
    };
    let Some((start, at, _)) = sentence_of(msg, claim) else {
        return false;
    };
    // A leak named as a risk to avoid (`to avoid the warning and possible memory
    // leaks`), beyond the clause the guards read, is none met.
    let avoided = msg[start..at].split_whitespace().rev().take(6).any(|w| {
        ["avoid", "prevent", "avoiding", "preventing"].contains(&w.to_lowercase().as_str())
    });
    if avoided {
        return false;
    }
    // The words that assert are English: a claim in another language (`tem um
    // vazamento de memoria`) stands as its clause does.
    let english = claim.to_ascii_lowercase();
    let after = msg.get(at + claim.len()..).unwrap_or("");
    // So does an English claim inside another language's sentence (`Inference과정에서
    // Memory Leak현상이 발생하는데`, a memory leak occurs during inference): a word of
    // that language right before or after it, spaced or not.
    let foreign = |c: char| c.is_alphabetic() && !c.is_ascii();
    let embedded =
        after.trim_start().starts_with(foreign) || msg[..at].trim_end().ends_with(foreign);
    if !claim.is_ascii() || embedded || !(english.contains("memory") || english.starts_with("leak"))
    {
        return true;
    }
    let before = msg[start..at].to_lowercase();
    // The words just before it: `ended up with memory leaks` in a sentence that began
    // `applications that I've worked on` tells a story, not a report.
    let near: Vec<&str> = before.split_whitespace().rev().take(4).collect();
    let near = near.into_iter().rev().collect::<Vec<_>>().join(" ");
    asserted(&near)
        || (english.starts_with("leak") && ongoing(&near))
        || (english.starts_with("leaks ") && told_of_a_subject(&before))
        || opens_a_title(&before, after, claim)
        || (met_after(after) && !defines(&near, after))
}

/// The verb after the leak says it was met (`a memory leak was introduced in 1.15`,
/// `the memory leak occurs when …`); not `is`, a page's general statement, nor a
/// definition ([`defines`]).
fn met_after(after: &str) -> bool {
    static MET: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &MET,
        r"(?i)^\s*(?:(?:was|were|has been|have been|had been) (?:\w+ly )?(?:introduced|found|observed|detected|noticed|spotted)|(?:is|was) still (?:present|there|happening)|(?:occurs|occurred|happens|happened|appears|appeared|persists|persisted|remains|remained)(?: \w+ly)? (?:in|when|on|with|after|during|since|while|at|again|even)|(?:still )?exists in)\b",
        after,
    )
}

/// `A memory leak occurs when …`, `In C++, a memory leak occurs when …`: a definition,
/// the article's generic `a` right before the claim and a verb in the present (`the
/// memory leak occurs when` tells of one met).
fn defines(near: &str, after: &str) -> bool {
    static GENERIC: OnceLock<Option<Regex>> = OnceLock::new();
    matches!(near.split_whitespace().last(), Some("a" | "an"))
        && matches(
            &GENERIC,
            r"(?i)^\s*(?:occurs|happens|appears|arises)\b",
            after,
        )
}

/// The leak told as going on (`gnome-shell is slowly leaking memory`, `it keeps leaking
/// memory`): the verb's own tense asserts it.
fn ongoing(near: &str) -> bool {
    static ONGOING: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &ONGOING,
        r"\b(?:is|are|was|were|been|keeps?|kept|started|starts)(?: \w+ly)?(?: (?:to|on))?$",
        near,
    )
}

/// `The application leaks memory in development mode`: a present tense with a named
/// subject before it. Not a relative clause (`code that leaks memory`), a negation
/// (`nothing here leaks memory`), a generic subject (`a closure in a loop leaks
/// memory`, `every handle leaks memory`), nor the reader addressed (`your worker leaks
/// memory when you forget close()`).
fn told_of_a_subject(before: &str) -> bool {
    let words: Vec<&str> = before
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    // A gerund that tells what code does (`Forgetting to call close() leaks memory`)
    // teaches; a service left running (`Running an always-on service leaks memory`)
    // reports.
    let generic = ["a", "an", "any", "every", "each", "some"].contains(first)
        || (first.ends_with("ing") && *first != "running")
        || words.contains(&"otherwise");
    let negated = words
        .iter()
        .any(|w| ["no", "not", "never", "nothing", "none"].contains(w) || w.ends_with("n't"));
    let addressed = words.iter().any(|w| ["you", "your"].contains(w));
    let clause = [
        "that",
        "which",
        "who",
        "what",
        "it",
        "also",
        "often",
        "sometimes",
        "usually",
        "rarely",
        "still",
        "and",
        "or",
        "if",
        "when",
        "whether",
        "how",
    ]
    .contains(last);
    !(generic || negated || addressed || clause)
}

/// The writer speaks of what they saw (`I`, `we`, `there is`, `it seems to have`,
/// `noticed`, `a massive memory leak`), also in the words of the European languages
/// reports are written in (`problemen te hebben met een memory leak`, having problems
/// with a memory leak).
fn asserted(near: &str) -> bool {
    static ASSERTED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &ASSERTED,
        r"\b(?:i|we|i'm|i've|we're|we've|my|our|there(?:'s)?|it|this|that|which|seems?|appears?|looks?|has|have|had|got|getting|notic\w+|observ\w+|experienc\w+|facing|having|seeing|suffer\w*|contains?|chasing|plagu\w+|problema?|issue|found|suspect\w*|confirm\w*|caus\w+|introduc\w+|massive|huge|serious|severe|big|bad|possible|potential|obvious|some sort of|kind of|ik|wij|hebben|heb|ich|wir|habe|haben|yo|tengo|tenemos|hay|eu|tenho|temos|tem|nous|avons|abbiamo|mam|mamy)\b",
        near,
    )
}

/// `Memory leak when …`, `Memory leak.` opening a sentence (an issue's title, a
/// report's first words); not `Memory leaks are …`, a page's general statement, nor
/// `Memory leak definition`, a page's heading.
fn opens_a_title(before: &str, after: &str, claim: &str) -> bool {
    static FOLLOWED: OnceLock<Option<Regex>> = OnceLock::new();
    let followed = matches(
        &FOLLOWED,
        r"(?i)^(?:\s*[.:!]|\s+(?:in|when|on|with|after|during|since|while|caused|from|at|using|of)\b)",
        after,
    );
    before
        .trim_matches(|c: char| !c.is_alphanumeric())
        .is_empty()
        && !claim.to_ascii_lowercase().ends_with('s')
        && followed
}
