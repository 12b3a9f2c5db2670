//! `doctor`: the machine's memory settings, read once and audited for what the
//! machine is for.

use serde::Serialize;

use crate::diagnose::doctor::audit;

use crate::error::{Error, Result};
use crate::model::finding::{Finding, Severity};
use crate::model::system::SystemSnapshot;
use crate::probe::root::Root;
use crate::probe::system;

pub use crate::diagnose::doctor::Profile;

pub const DOCTOR_SCHEMA: &str = "memtriage.doctor/v1";

/// What `doctor` found (`memtriage.doctor/v1`): one finding per check, passed
/// checks at severity `ok`.
#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub schema: &'static str,
    pub profile: Profile,
    pub system: SystemSnapshot,
    pub findings: Vec<Finding>,
}

impl DoctorReport {
    /// Whether a check failed at error severity (the CLI exits 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// The profile a caller names: `training`, `inference` or `shared`.
pub fn profile(name: &str) -> Result<Profile> {
    name.parse()
        .map_err(|detail| Error::bad_input(format!("profile {name:?}"), detail))
}

/// Reads the machine's memory settings once and audits them for `profile`; never
/// fails as a whole (what could not be read is a finding of its own).
pub fn doctor(root: &Root, profile: Profile) -> DoctorReport {
    let system = system::read(root);
    let findings = audit(&system, profile);
    DoctorReport {
        schema: DOCTOR_SCHEMA,
        profile,
        system,
        findings,
    }
}
