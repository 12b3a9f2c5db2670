//! NVIDIA's Xid errors as data (`xid_catalog.json`, compiled from NVIDIA's Xid
//! catalog with its sources): what each means, its likely causes, whether the GPU
//! needs a reset, and the next step. `explain`, `run` (NVML events) and `doctor` (the
//! kernel log since boot) read this one catalogue.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::model::finding::{CauseKind, Severity};

/// One Xid of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Xid {
    pub xid: u32,
    /// NVIDIA's own name, e.g. `Double Bit ECC Error`.
    pub name: String,
    /// In plain words, one sentence.
    pub meaning: String,
    /// Most likely first.
    pub causes: Vec<XidCause>,
    pub severity: Severity,
    pub reset: Reset,
    /// What to do next, with commands.
    pub next_step: String,
    /// Where the row comes from.
    pub source: String,
}

/// The cause columns of NVIDIA's Xid table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XidCause {
    UserCode,
    Driver,
    Hardware,
    SystemMemoryCorruption,
    Bus,
    Thermal,
    FramebufferCorruption,
}

/// Whether the GPU needs a reset (or the machine a reboot) to recover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reset {
    No,
    Yes,
    /// Only when the error recurs.
    IfRecurs,
}

impl Xid {
    /// Whom to call, from the most likely cause.
    pub fn cause_kind(&self) -> CauseKind {
        match self.causes.first() {
            Some(XidCause::UserCode) => CauseKind::UserCode,
            Some(XidCause::Driver) => CauseKind::Driver,
            Some(_) => CauseKind::Hardware,
            None => CauseKind::Driver,
        }
    }

    /// The next step, with the reset the GPU needs said first when it needs one.
    pub fn fix(&self) -> String {
        match self.reset {
            Reset::Yes => format!(
                "The GPU needs a reset (or a reboot) to recover. {}",
                self.next_step
            ),
            Reset::IfRecurs | Reset::No => self.next_step.clone(),
        }
    }
}

#[derive(Deserialize)]
struct Catalogue {
    xids: Vec<Xid>,
}

/// Every Xid of the catalogue, by number.
pub fn catalogue() -> &'static [Xid] {
    static XIDS: OnceLock<Vec<Xid>> = OnceLock::new();
    XIDS.get_or_init(|| {
        // Compiled in and checked by the tests below: a parse error is a build bug.
        serde_json::from_str::<Catalogue>(include_str!("xid_catalog.json"))
            .map(|c| c.xids)
            .unwrap_or_default()
    })
}

pub fn lookup(xid: u32) -> Option<&'static Xid> {
    let all = catalogue();
    all.binary_search_by_key(&xid, |x| x.xid)
        .ok()
        .map(|i| &all[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_parses_sorted_and_unique() {
        let parsed: Catalogue = serde_json::from_str(include_str!("xid_catalog.json")).unwrap();
        assert!(parsed.xids.len() >= 40, "{} Xids", parsed.xids.len());
        assert!(parsed.xids.windows(2).all(|w| w[0].xid < w[1].xid));
        assert_eq!(catalogue().len(), parsed.xids.len());
        for x in &parsed.xids {
            assert!(
                !x.causes.is_empty() && !x.meaning.is_empty(),
                "Xid {}",
                x.xid
            );
            assert!(x.source.starts_with("https://"), "Xid {} source", x.xid);
        }
    }

    #[test]
    fn hardware_xids_send_the_node_to_nvidias_diagnostic() {
        for xid in [48, 79, 95] {
            let x = lookup(xid).unwrap();
            assert_eq!(x.reset, Reset::Yes, "Xid {xid}");
            assert_eq!(x.severity, Severity::Error);
            assert!(
                x.next_step.contains("dcgmi diag -r 2"),
                "Xid {xid}: {}",
                x.next_step
            );
            assert!(x.fix().starts_with("The GPU needs a reset"));
        }
        assert_eq!(lookup(13).unwrap().cause_kind(), CauseKind::UserCode);
        assert_eq!(lookup(48).unwrap().cause_kind(), CauseKind::Hardware);
        assert_eq!(lookup(45).unwrap().severity, Severity::Info);
        assert!(lookup(7).is_none());
    }
}
