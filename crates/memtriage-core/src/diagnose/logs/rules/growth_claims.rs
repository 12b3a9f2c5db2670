//! Memory told to rise or to fill, in the writer's words, where no figures are pasted:
//! in the languages whose reports say so without the word leak (`مصرف رم به مرور زمان
//! بالا میره`, `内存一直在涨`), and the process said to take all the memory there is
//! (`within hours of starting it consumes all available RAM`), memory said to start
//! climbing or not to stop growing, and the machine said to choke once memory is full.
//! Read with the guards of `claims`, beside it because that module is at its size
//! limit.

use std::sync::OnceLock;

use regex::Regex;

use super::super::prose::matches;
use super::claims::{claim, extract_claim, extract_told, rise_stands, sentence_of};
use super::kill_claims::supposes_a_case;
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::Warn;

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // Memory that rises with time, told in the languages whose reports say so
            // without the word leak: Persian (`مصرف رم به مرور زمان بالا میره`, RAM use
            // goes up over time; `پر شدن زیاد رم`, RAM filling up; `۷۰ درصد رم`, 70% of
            // the RAM; `شدید از رم استفاده میکنه`, uses RAM heavily; `رم … باز میره بالا`, RAM goes
            // up again; `رم پر میکنه`, it fills the RAM), Finnish
            // (`muistinkäyttö kasvaa`, memory use grows). `\b` is ASCII's here: the
            // Persian word is bounded by spaces and marks.
            "prose.growth-claim",
            C::MemoryGrowth,
            Warn,
            &[
                "رم",
                "muistinkäyt",
                "muistin käyt",
                "muisti kasvaa",
                "памят",
                "Памят",
                "内存",
                "메모리가 계속",
                "메모리가 점점",
                "메모리 사용량이 계속",
                "메모리 사용량이 점점",
                "メモリ",
            ],
            // Russian: `Память медленно, но верно растёт` (memory grows slowly but
            // surely), `постоянно растущий объем виртуальной памяти`. Chinese: a rise
            // from one figure to another (`内存占用从74M升到800多M`) or one that goes on
            // (`内存一直在涨`, `内存持续增长`, `内存就会不停的增加`). Korean: `메모리가 계속
            // 증가하는 현상` (memory keeps increasing).
            r"(?i:(?P<claim>مصرف(?: بیش از حد)? رم(?:[\s.,،)»]|$)[^.\n]{0,30}?(?:بالا|زیاد|افزایش)|(?:^|[\s(«])رم(?:[\s.,،)»]|$)[^.\n]{0,40}?میره بالا|(?:^|[\s(«])رم(?: رو| را)? پر می\s?کن|(?:^|[\s(«])رم(?:[\s.,،)»]|$)[^.\n]{0,30}?(?:بالا میر|بالا رفتن|افزایش|پر میش|به مرور زمان[^.\n]{0,20}?(?:بالا|افزایش|زیاد))|پر شد(?:ن|ه)[^.\n]{0,15}?(?:^|[\s(«])رم(?:[\s.,،)»]|$)|(?:[7-9]\d|100|[۷-۹][۰-۹]|۱۰۰) درصد (?:از )?رم(?:[\s.,،)»]|$)|(?:^|[\s(«])رم(?:[\s.,،)»]|$)[^.\n]{0,20}?بالای (?:[7-9]\d|[۷-۹][۰-۹])|(?:شدید|بیش از حد|خیلی زیاد) (?:از )?رم(?:[\s.,،)»]|$)|muistin ?käyttö (?:kasvaa|nousee)|muisti kasvaa|памят\w*[^.\n]{0,40}?раст[её]т|раст[уё]щ\w*[^.\n]{0,30}?памят\w*|内存(?:占用|使用|用量|使用量)?[^。，,\n]{0,6}?从\s*\d+(?:\.\d+)?\s*[KMGT]?i?B?[^。，,\n]{0,4}?(?:升|涨|增|上升|增长|增加)(?:到|至)|内存(?:占用|使用|用量|使用量)?(?:就|也|还|会)*(?:一直|持续|不断|不停|逐渐|慢慢|缓慢)(?:在|的|地)?(?:上涨|涨|增长|增加|上升|升高|变大)|메모리(?:가| 사용량이) (?:계속|점점) (?:증가|늘어|늘고|올라|커)|メモリの?(?:使用量|消費量|使用率)?(?:が|は)?(?:継続的に|どんどん|徐々に|少しずつ|じわじわ|ずっと)(?:増加|増え|上昇|増大|上が)|メモリの?(?:使用量|消費量)?(?:が|は)?増え続け))",
            "The report says memory keeps rising ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // A process said to take all the memory there is (`Bazarr container using all
            // available host RAM`, `com.docker.hyperkit consuming 100% available memory`,
            // `a leak that gradually consumed all available memory`): it grew to the
            // machine's size, whatever ended it, which a stronger line tells.
            "prose.all-memory-claim",
            C::MemoryGrowth,
            Warn,
            &[
                "all available ",
                "all the available ",
                "all my available ",
                "all of the available ",
                "100% available ",
                "100% of the available ",
                "all memory",
                "all the memory",
                "all my memory",
                "all system memory",
                "all of the memory",
            ],
            // RAM only after `available`: `all the ram` holds no anchor of the
            // prefilter's.
            r"(?i:(?P<claim>\b(?:consum(?:es|ed|ing)|eat(?:s|ing)|ate|us(?:es|ed|ing)|tak(?:es|ing)|took|hog(?:s|ged|ging)|fill(?:s|ed|ing)|gobbl(?:es|ed|ing)) (?:up )?(?:(?:all (?:the |my |of the )?|100% (?:of the )?)available (?:host |system )?(?:ram|memory)|all (?:the |my |system |of the )?memory)\b))",
            "The report says the process took all the memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // A leak told with its size (`GStreamer leaks about 80 Megabytes per
            // second(!!)`, `it leaked 2 GB overnight`): a measure, where the word alone
            // (`leaks memory`) needs who says it; smaller than a megabyte only at a rate
            // (`leaking roughly 130 bytes per request`), as a tutorial's `leaks 40 bytes`
            // is an example's.
            "prose.leak-measured",
            C::MemoryGrowth,
            Warn,
            &["leaks ", "leaking ", "leaked "],
            r"(?i:(?P<claim>\bleak(?:s|ing|ed) (?:about |around |approximately |roughly |nearly |almost |over |up to |~\s*)?\d[\d.,]*\s*(?:(?:[mgt]i?b|megabytes?|gigabytes?)\b|(?:ki?b|kilobytes?|bytes?)\s+(?:per|each|every|of memory|a (?:request|call|frame|second|minute|iteration))\b)))",
            "The report says the program leaks memory at a measured size ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // Growth the writer saw, named as a noun (`We've observed memory growth in
            // the traffic schedule`, `we are seeing significant memory growth`): what
            // was watched, not a page's word on growth in general.
            "prose.growth-seen",
            C::MemoryGrowth,
            Warn,
            &["memory growth", "memory usage growth"],
            r"(?i:(?P<claim>\b(?:observ(?:e|ed|ing)|notic(?:e|ed|ing)|see|seeing|saw|experienc(?:e|ed|ing)|found|detected|there (?:is|was)) (?:a |an |some )?(?:(?:significant|steady|continuous|constant|huge|large|big|slow|gradual|unbounded|linear) )?memory (?:usage )?growth\b))",
            "The report says memory was seen growing ({claim})",
        )
    },
    Rule {
        // Read as every told rise is: not one that levels off, scales with a
        // workload, or is called expected.
        extract: Some(|msg, out| rise_stands(msg, out)),
        certainty: Possible,
        ..rule(
            // A rise the writer watched begin (`Then memory started climbing across
            // all instances`, `RAM usage began growing after the upgrade`): an onset
            // is seen, where a page says what memory does.
            "prose.growth-onset",
            C::MemoryGrowth,
            Warn,
            &[
                "started climb",
                "started grow",
                "started increas",
                "started rising",
                "started to climb",
                "started to grow",
                "started to increas",
                "began climb",
                "began grow",
                "began increas",
                "began rising",
                "began to climb",
                "began to grow",
                "began to increas",
            ],
            r"(?i:(?P<claim>\b(?:memory|ram|rss|heap)(?: usage| use| consumption| footprint)?\b[^.\n]{0,20}?\b(?:started|began) (?:(?:to )?(?:climb|grow|increas)\w*|rising)\b))",
            "The report says memory started rising ({claim})",
        )
    },
    Rule {
        extract: Some(extract_unstopped),
        certainty: Possible,
        ..rule(
            // `the ram dont stop to grow`, `memory never stops increasing`: the
            // negation is the rise's, so the guards read only the words around it.
            "prose.growth-unstopped",
            C::MemoryGrowth,
            Warn,
            &[
                "stop grow",
                "stops grow",
                "stop to grow",
                "stop increas",
                "stops increas",
                "stop to increas",
            ],
            r"(?i:(?P<claim>\b(?:memory|ram|rss|heap)(?: usage| use| consumption)?\b[^.\n]{0,10}?\b(?:do(?:es)?n'?t|do(?:es)? not|never|won'?t|will not) stops? (?:to )?(?:grow|growing|increas(?:e|ing))\b))",
            "The report says memory never stops rising ({claim})",
        )
    },
    Rule {
        extract: Some(extract_unsupposed),
        certainty: Possible,
        ..rule(
            // `memory is maxed out and server is almost unresponsive`: the machine
            // choked once its memory was full.
            "prose.full-memory-chokes",
            C::MemoryPressure,
            Warn,
            &[
                "memory is maxed",
                "memory was maxed",
                "memory gets maxed",
                "memory got maxed",
                "memory is full",
                "memory was full",
                "memory is exhausted",
                "memory was exhausted",
            ],
            r"(?i:(?P<claim>\bmemory (?:is|was|gets|got) (?:maxed(?: out)?|full|exhausted)\b[^.,;\n]{0,40}?\b(?:unresponsive|freez(?:es|ing)|froze|frozen|hangs|hung|locks up|locked up|crawl(?:s|ing|ed)?)\b))",
            "The report says the machine choked with its memory full ({claim})",
        )
    },
];

/// `doesn't stop growing`, its negation the rise's, where the sentence supposes
/// nothing (`By design, heap usage doesn't stop growing until it reaches -Xmx`).
#[allow(clippy::ptr_arg)]
fn extract_unstopped(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static BY_DESIGN: OnceLock<Option<Regex>> = OnceLock::new();
    !matches(
        &BY_DESIGN,
        r"(?i)\b(?:by design|expected|normal|until it reaches)\b",
        msg,
    ) && !supposed(msg, out)
        && extract_told(msg, out)
}

/// A claim no `if` or `when` before it in its sentence makes a page's case
/// (`When memory is exhausted, the system becomes unresponsive`), unless the writer
/// speaks of themselves.
#[allow(clippy::ptr_arg)]
pub(super) fn extract_unsupposed(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    !supposed(msg, out) && extract_claim(msg, out)
}

fn supposed(msg: &str, out: &[(String, String)]) -> bool {
    claim(out)
        .and_then(|told| sentence_of(msg, told).map(|(start, at, _)| &msg[start..at]))
        .is_none_or(supposes_a_case)
}
