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
    /// The culprit, and how its line named it: a later line that names it more
    /// surely (WinDbg's `IMAGE_NAME:` after its symbol complaints) takes its place.
    driver: Option<(Naming, String)>,
    bucket: Option<String>,
    /// WinDbg's `KEY_VALUES` block: the key whose `Value:` the next line holds.
    key: Option<Key>,
}

/// How surely a line names the culprit, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Naming {
    /// WinDbg had no symbols for it: a third-party driver, most often on the stack.
    NoSymbols,
    /// An address inside it (`npcap.sys+5715`, a blue screen's `npf.sys - Address …`,
    /// a failure bucket's `_IMAGE_igdkmdnd64.sys` or `nvlddmkm!`).
    Address,
    /// The analysis's own answer (`IMAGE_NAME:`, `Caused By Driver`, `What failed:`).
    Analysis,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Code,
    Bucket,
}

/// `BUGCHECK_CODE:  133`, `Bug Check Code : 0x0000003b`, `Bugcheck code: 0xD1 (…)`,
/// `The bugcheck was: 0x0000007c (…)`, `STOP: 0x000000D1 (…)`, `BugcheckCode">80<`,
/// WinDbg's headline `DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)` and its `BUGCHECK_STR: 0xD1`.
const CODE_PATTERN: &str = r#"(?i)(?:^BUGCHECK_CODE:\s*(?P<hex>[0-9a-f]+)\s*$|Bug ?Check Code\s*:\s*(?:0x)?(?P<hex2>[0-9a-f]+)\b|the bugcheck was:\s*0x(?P<hex3>[0-9a-f]+)|\bSTOP:\s*0x(?P<hex4>[0-9a-f]+)|BugcheckCode"?>\s*(?P<dec>\d+)\s*<|^[A-Z][A-Z0-9_]{5,} \((?P<hex5>[0-9a-f]+)\)\s*$|^BUGCHECK_STR:\s*0x(?P<hex6>[0-9a-f]+)\s*$)(?:\s*\((?P<list>[^)]*)\))?"#;
/// `BUGCHECK_P1: ffff…`, `Arg1: 0000…, memory referenced.`, `BugcheckParameter1">0x…<`.
const PARAMETER_PATTERN: &str = r#"(?i)^(?:BUGCHECK_P(?P<n>[1-4]):\s*|Arg(?P<n2>[1-4]):\s*|.*BugcheckParameter(?P<n3>[1-4])"?>\s*)(?:0x)?(?P<value>[0-9a-f`]+)"#;
/// What each tool calls the culprit (BlueScreenView's label in English and Russian;
/// the Windows 10 stop screen's `What failed:`).
const DRIVER_PATTERN: &str = r"(?i)(?:^IMAGE_NAME:\s*|Caused By Driver\s*:\s*|Драйвер причины\s*:\s*|probably caused by the following module:\s*|Probably caused by\s*:\s*|What failed:\s*)(?P<driver>[\w.-]+\.(?:sys|exe|dll))\b";
/// An address inside a driver: `npcap.sys+5715` (BlueScreenView's caused-by address, in
/// any language), the classic blue screen's `*** npf.sys - Address F… base at F…`, a
/// failure bucket's `_IMAGE_igdkmdnd64.sys`, or its `0x50_nvlddmkm!unknown_function`.
const ADDRESS_PATTERN: &str = r"(?i)(?:^(?:\*\*\*\s+)?(?P<stop>[\w.-]+\.sys) - Address\b|\b(?P<offset>[\w-]+\.sys)\+(?:0x)?[0-9a-f]+\b|_IMAGE_(?P<image>[\w-]+\.sys)\b|^(?:FAILURE_BUCKET_ID:\s*|Value:\s*|Bucket ID:\s*)\S*?(?:^|_)(?P<module>[a-z][a-z0-9]+)!)";
/// WinDbg's complaints about a driver it has no symbols for (`Unable to load image
/// \SystemRoot\system32\DRIVERS\npcap.sys`).
const NO_SYMBOLS_PATTERN: &str = r"(?i)(?:Unable to load image\s+(?:\S*\\)?|Unable to verify timestamp for\s+|symbols could not be loaded for\s+)(?P<driver>[\w.-]+\.(?:sys|exe|dll))\b";
const BUCKET_PATTERN: &str = r"^FAILURE_BUCKET_ID:\s*(?P<bucket>\S+)";
/// A bug check's name: the stop screen's `Stop code:`, WhoCrashed's `Error:`,
/// BlueScreenView's text, in any language around it.
const NAME_PATTERN: &str = r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}\b";
/// WinDbg's `KEY_VALUES`: `Key  : Bugcheck.Code.LegacyAPI` over `Value: 0x116`.
const KEY_PATTERN: &str =
    r"^Key\s*:\s*(?:(?P<code>Bugcheck\.Code\.\w+)|(?P<bucket>Failure\.Bucket))\s*$";

static CODE: OnceLock<Option<Regex>> = OnceLock::new();
static PARAMETER: OnceLock<Option<Regex>> = OnceLock::new();
static DRIVER: OnceLock<Option<Regex>> = OnceLock::new();
static ADDRESS: OnceLock<Option<Regex>> = OnceLock::new();
static NO_SYMBOLS: OnceLock<Option<Regex>> = OnceLock::new();
static BUCKET: OnceLock<Option<Regex>> = OnceLock::new();
static NAME: OnceLock<Option<Regex>> = OnceLock::new();
static KEY: OnceLock<Option<Regex>> = OnceLock::new();

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
        if let Some(key) = self.key.take() {
            if let Some(value) = t.strip_prefix("Value:").map(str::trim) {
                match key {
                    Key::Code => {
                        self.code = self.code.or(hex(value).and_then(|v| v.try_into().ok()))
                    }
                    Key::Bucket => self.bucket = self.bucket.clone().or(Some(value.to_string())),
                }
            }
        }
        if let Some(c) = lazy_regex(&KEY, KEY_PATTERN).and_then(|re| re.captures(t)) {
            self.key = Some(if c.name("code").is_some() {
                Key::Code
            } else {
                Key::Bucket
            });
            return;
        }
        if self.code.is_none() && self.read_code(t) {
            return;
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
        self.read_driver(t);
        if self.bucket.is_none() {
            if let Some(c) = lazy_regex(&BUCKET, BUCKET_PATTERN).and_then(|re| re.captures(t)) {
                self.bucket = c.name("bucket").map(|m| m.as_str().to_string());
            }
        }
    }

    /// A line above the headline: read as any, but a `KEY_VALUES` key the headline left
    /// waiting is the next line's, not one of these.
    pub(super) fn read_above(&mut self, msg: &str) {
        let key = self.key.take();
        self.read(msg);
        self.key = key;
    }

    /// The bug check's code (and the parameters a one-line form lists after it), or
    /// its name where the line gives no code; whether the line held one.
    fn read_code(&mut self, t: &str) -> bool {
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
            return true;
        }
        let named = lazy_regex(&NAME, NAME_PATTERN)
            .and_then(|re| re.find_iter(t).find_map(|m| bugcheck::by_name(m.as_str())));
        self.code = named.map(|b| b.code);
        false
    }

    /// The culprit this line names, where it names one more surely than the lines
    /// before.
    fn read_driver(&mut self, t: &str) {
        let surest = self.driver.as_ref().map(|(n, _)| *n);
        let named = |re: Option<&Regex>| {
            re.and_then(|re| re.captures(t))
                .and_then(|c| c.name("driver").map(|m| m.as_str().to_string()))
        };
        let found = if surest < Some(Naming::Analysis) {
            named(lazy_regex(&DRIVER, DRIVER_PATTERN)).map(|d| (Naming::Analysis, d))
        } else {
            None
        };
        let found = found.or_else(|| {
            (surest < Some(Naming::Address))
                .then(|| address_driver(t))
                .flatten()
                .map(|d| (Naming::Address, d))
        });
        let found = found.or_else(|| {
            (surest.is_none())
                .then(|| named(lazy_regex(&NO_SYMBOLS, NO_SYMBOLS_PATTERN)))
                .flatten()
                .map(|d| (Naming::NoSymbols, d))
        });
        if found.is_some() {
            self.driver = found;
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
        if let Some((_, d)) = &self.driver {
            out.push(("bugcheck_driver".into(), d.clone()));
        }
        if let Some(b) = &self.bucket {
            out.push(("bugcheck_bucket".into(), b.clone()));
        }
    }
}

/// The driver an address in this line lies in; WinDbg's `nt` module is the kernel.
fn address_driver(t: &str) -> Option<String> {
    let c = lazy_regex(&ADDRESS, ADDRESS_PATTERN)?.captures(t)?;
    if let Some(m) = ["stop", "offset", "image"].iter().find_map(|n| c.name(n)) {
        return Some(m.as_str().to_string());
    }
    let module = c.name("module")?.as_str();
    Some(match module {
        "nt" => "ntoskrnl.exe".into(),
        m => format!("{m}.sys"),
    })
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
