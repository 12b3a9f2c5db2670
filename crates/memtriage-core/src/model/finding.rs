//! A finding is data: what was seen, how bad it is, the evidence, why it matters and
//! the exact fix. Whoever asked renders it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Info,
    Warn,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

/// One value that was read, and where it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub label: String,
    pub value: String,
    /// The file or command the value came from, e.g. `/proc/sys/vm/overcommit_memory`.
    pub source: String,
}

impl Evidence {
    pub fn new(
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) -> Self {
        Evidence {
            label: label.into(),
            value: value.into(),
            source: source.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier, e.g. `overcommit.strict-without-headroom`.
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub evidence: Vec<Evidence>,
    /// One line on why it matters for ML jobs.
    pub why: String,
    /// The exact fix (commands or config), empty when nothing needs doing.
    pub fix: String,
}
