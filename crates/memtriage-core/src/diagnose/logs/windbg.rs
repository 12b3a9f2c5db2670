//! A Windows bug check as users paste it, read as a whole: WinDbg's `!analyze -v`
//! (`BUGCHECK_CODE:`, `BUGCHECK_P1:` or `Arg1:`, `IMAGE_NAME:`, `Probably caused by :`),
//! BlueScreenView's report (`Bug Check Code :`, `Caused By Driver :`), WhoCrashed's
//! (`Bugcheck code: 0xD1 (0x0, 0xFF, 0x0, 0x0)`, `probably caused by the following
//! module:`), Event Viewer's BugCheck 1001 (`The bugcheck was: 0x0000003b (…)`) and
//! Kernel-Power 41's data (`BugcheckCode` in decimal), a blue screen's `STOP:` line.
//! The code and the parameters, named from the bug check reference, and the driver.

use std::sync::OnceLock;

use regex::Regex;

use super::engine::lazy_regex;
use super::oops::Verdict;
use super::LogMatch;
use crate::diagnose::bugcheck;
use crate::model::finding::Evidence;

/// A WinDbg analysis runs to a few hundred lines with its stack and registers.
pub(super) const MAX_LINES: u32 = 400;

#[derive(Debug, Clone, Default)]
pub(super) struct Details {
    code: Option<u32>,
    parameters: [Option<u64>; 4],
    driver: Option<String>,
    bucket: Option<String>,
}

/// `BUGCHECK_CODE:  133`, `Bug Check Code : 0x0000003b`, `Bugcheck code: 0xD1 (…)`,
/// `The bugcheck was: 0x0000007c (…)`, `STOP: 0x000000D1 (…)`, `BugcheckCode">80<`,
/// WinDbg's headline `DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)` and its `BUGCHECK_STR: 0xD1`.
const CODE_PATTERN: &str = r#"(?i)(?:^BUGCHECK_CODE:\s*(?P<hex>[0-9a-f]+)\s*$|Bug ?Check Code\s*:\s*(?:0x)?(?P<hex2>[0-9a-f]+)\b|the bugcheck was:\s*0x(?P<hex3>[0-9a-f]+)|\bSTOP:\s*0x(?P<hex4>[0-9a-f]+)|BugcheckCode"?>\s*(?P<dec>\d+)\s*<|^[A-Z][A-Z0-9_]{5,} \((?P<hex5>[0-9a-f]+)\)\s*$|^BUGCHECK_STR:\s*0x(?P<hex6>[0-9a-f]+)\s*$)(?:\s*\((?P<list>[^)]*)\))?"#;
/// `BUGCHECK_P1: ffff…`, `Arg1: 0000…, memory referenced.`, `BugcheckParameter1">0x…<`.
const PARAMETER_PATTERN: &str = r#"(?i)^(?:BUGCHECK_P(?P<n>[1-4]):\s*|Arg(?P<n2>[1-4]):\s*|.*BugcheckParameter(?P<n3>[1-4])"?>\s*)(?:0x)?(?P<value>[0-9a-f`]+)"#;
/// What each tool calls the culprit; WinDbg's complaints about a driver it has no symbols for (`Unable to load image
/// \SystemRoot\system32\DRIVERS\npcap.sys`) name a third-party driver, most often the
/// one on the stack.
const DRIVER_PATTERN: &str = r"(?i)(?:^IMAGE_NAME:\s*|Caused By Driver\s*:\s*|probably caused by the following module:\s*|Probably caused by\s*:\s*|^\*\*\*\s+|Unable to load image\s+(?:\S*\\)?|Unable to verify timestamp for\s+|symbols could not be loaded for\s+)(?P<driver>[\w.-]+\.(?:sys|exe|dll))\b";
const BUCKET_PATTERN: &str = r"^FAILURE_BUCKET_ID:\s*(?P<bucket>\S+)";

static CODE: OnceLock<Option<Regex>> = OnceLock::new();
static PARAMETER: OnceLock<Option<Regex>> = OnceLock::new();
static DRIVER: OnceLock<Option<Regex>> = OnceLock::new();
static BUCKET: OnceLock<Option<Regex>> = OnceLock::new();

fn hex(text: &str) -> Option<u64> {
    let digits: String = text
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X")
        .chars()
        .filter(|c| *c != '`')
        .collect();
    u64::from_str_radix(&digits, 16).ok()
}

impl Details {
    /// Reads one line's message for the fields it may hold.
    pub(super) fn read(&mut self, msg: &str) {
        let t = msg.trim();
        if self.code.is_none() {
            if let Some(c) = lazy_regex(&CODE, CODE_PATTERN).and_then(|re| re.captures(t)) {
                let h = ["hex", "hex2", "hex3", "hex4", "hex5", "hex6"]
                    .iter()
                    .find_map(|n| c.name(n))
                    .and_then(|m| hex(m.as_str()));
                let d = c.name("dec").and_then(|m| m.as_str().parse::<u64>().ok());
                self.code = h.or(d).and_then(|v| u32::try_from(v).ok());
                if let Some(list) = c.name("list") {
                    for (slot, value) in self.parameters.iter_mut().zip(list.as_str().split(',')) {
                        *slot = slot.or(hex(value));
                    }
                }
                return;
            }
        }
        if let Some(c) = lazy_regex(&PARAMETER, PARAMETER_PATTERN).and_then(|re| re.captures(t)) {
            let n = ["n", "n2", "n3"]
                .iter()
                .find_map(|n| c.name(n))
                .and_then(|m| m.as_str().parse::<usize>().ok());
            if let Some(slot) = n.and_then(|n| self.parameters.get_mut(n - 1)) {
                *slot = slot.or(c.name("value").and_then(|v| hex(v.as_str())));
            }
            return;
        }
        if self.driver.is_none() {
            if let Some(c) = lazy_regex(&DRIVER, DRIVER_PATTERN).and_then(|re| re.captures(t)) {
                self.driver = c.name("driver").map(|m| m.as_str().to_string());
                return;
            }
        }
        if self.bucket.is_none() {
            if let Some(c) = lazy_regex(&BUCKET, BUCKET_PATTERN).and_then(|re| re.captures(t)) {
                self.bucket = c.name("bucket").map(|m| m.as_str().to_string());
            }
        }
    }

    pub(super) fn captures(&self, out: &mut Vec<(String, String)>) {
        if let Some(code) = self.code {
            out.push(("bugcheck_code".into(), code.to_string()));
        }
        for (i, p) in self.parameters.iter().enumerate() {
            if let Some(p) = p {
                out.push((format!("bugcheck_p{}", i + 1), p.to_string()));
            }
        }
        if let Some(d) = &self.driver {
            out.push(("bugcheck_driver".into(), d.clone()));
        }
        if let Some(b) = &self.bucket {
            out.push(("bugcheck_bucket".into(), b.clone()));
        }
    }
}

pub(super) fn verdict(group: &[&LogMatch], source: &str) -> Option<Verdict> {
    let m = group
        .iter()
        .find(|m| m.capture("bugcheck_code").is_some())?;
    let at = format!("{source}:{}", m.line_no);
    let code: u32 = m.capture("bugcheck_code")?.parse().ok()?;
    let parameter = |i: usize| {
        m.capture(&format!("bugcheck_p{}", i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let mut evidence = bugcheck::evidence(code, &std::array::from_fn(parameter), &at);
    let driver = m.capture("bugcheck_driver");
    if let Some(d) = driver {
        evidence.push(Evidence::text(
            "suspect",
            format!("{d} ({})", bugcheck::whose(d)),
            at.clone(),
        ));
    }
    if let Some(b) = m.capture("bugcheck_bucket") {
        evidence.push(Evidence::text("failure bucket", b.to_string(), at.clone()));
    }
    let points = bugcheck::lookup(code).map_or(bugcheck::Points::Code, |c| c.points);
    Some(Verdict {
        title: bugcheck::title(code, driver),
        evidence,
        fix: bugcheck::fix_for(points, driver),
        cause: bugcheck::cause_of(points, driver),
    })
}
