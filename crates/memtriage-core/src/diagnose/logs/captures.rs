//! What a rule's match holds: its named captures, and which of a line's matches
//! stands once the rule's extractor has read it.

use std::ops::Range;

use regex::Regex;

use super::engine;
use super::rules::Extractor;

/// A capture that is only a placeholder (`<n>`, `<n> GiB`): the value it stood for.
fn stands_for_a_value(value: &str) -> bool {
    value
        .strip_prefix(engine::PLACEHOLDER)
        .is_some_and(|unit| unit.trim().chars().all(|c| c.is_ascii_alphabetic()))
}

/// Named groups that took part, `_kb` figures as IEC sizes.
pub(super) fn push_captures(re: &Regex, caps: &regex::Captures<'_>, out: &mut NamedValues) {
    for name in re.capture_names().flatten() {
        let Some(v) = caps.name(name) else {
            continue;
        };
        let value = v.as_str().trim();
        if stands_for_a_value(value) {
            // Anonymised: unknown, so the finding says it without the figure.
            continue;
        }
        if let Some(base) = name.strip_suffix("_kb") {
            if let Some(b) = value.parse::<u64>().ok().and_then(|k| k.checked_mul(1024)) {
                out.push((base.to_string(), crate::model::units::iec(b)));
            }
            continue;
        }
        if !out.iter().any(|(k, _)| k == name) {
            out.push((name.to_string(), value.to_string()));
        }
    }
}

/// A match's named groups, as (name, value).
pub(super) type NamedValues = Vec<(String, String)>;

/// The first of the matches `found` in `msg` that the rule's extractor accepts, with
/// its named groups and those of the rule's optional patterns. A line may deny or
/// suppose one claim and make the next (`the RAM usage is growing for no reason … the
/// used RAM gradually increases`): a rejected match lets the line's later ones be
/// read.
pub(super) fn standing_match<'m>(
    mut found: impl Iterator<Item = regex::Captures<'m>>,
    re: &Regex,
    optional: &[Regex],
    extract: Option<Extractor>,
    msg: &str,
) -> Option<(Range<usize>, NamedValues)> {
    found.find_map(|caps| {
        let mut captures = Vec::new();
        push_captures(re, &caps, &mut captures);
        for opt in optional {
            if let Some(c) = opt.captures(msg) {
                push_captures(opt, &c, &mut captures);
            }
        }
        let stands = extract.is_none_or(|extract| extract(msg, &mut captures));
        // A claim's span is its capture: the words around it (the quotes a retold
        // `Killed` needs) are no part of what a page may be mentioning.
        let span = caps.name("claim").or_else(|| caps.get(0));
        stands.then(|| (span.map_or(0..0, |m| m.range()), captures))
    })
}
