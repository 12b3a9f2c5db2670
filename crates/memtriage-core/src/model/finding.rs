//! A finding is data: what was seen, how bad it is, the evidence, why it matters and
//! the exact fix. Whoever asked renders it.
//!
//! # Evidence in JSON
//!
//! ```json
//! {"label": "MemAvailable", "value": "3.2 GiB (12% of RAM)",
//!  "quantity": 3435973837, "unit": "bytes", "source": "/proc/meminfo"}
//! ```
//!
//! `value` is the text people read (sizes in IEC units), as in schema v1. `quantity`
//! and `unit` were added beside it: the same measurement as a number, so a program or
//! an exporter need not parse text. `unit` is one of `bytes` (an integer of bytes,
//! negative only for a headroom already overdrawn), `count` (an integer), `ratio` (a
//! share, 1.0 = 100%) or `seconds`. Evidence that is not a single measurement (a path,
//! a log line, a setting's name) has neither field.

use serde::{Deserialize, Serialize};

use super::units::{iec, iec_signed};

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

/// A measurement with its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    Bytes(u64),
    /// Bytes that may be below zero: a headroom already overdrawn.
    SignedBytes(i64),
    Count(u64),
    /// A share: 0.25 is 25%.
    Ratio(f64),
    Seconds(f64),
}

/// The unit of a [`Quantity`], as JSON names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Bytes,
    Count,
    Ratio,
    Seconds,
}

impl Quantity {
    pub fn unit(self) -> Unit {
        match self {
            Quantity::Bytes(_) | Quantity::SignedBytes(_) => Unit::Bytes,
            Quantity::Count(_) => Unit::Count,
            Quantity::Ratio(_) => Unit::Ratio,
            Quantity::Seconds(_) => Unit::Seconds,
        }
    }

    /// The text people read: IEC units for bytes, a percentage for a ratio.
    pub fn text(self) -> String {
        match self {
            Quantity::Bytes(b) => iec(b),
            Quantity::SignedBytes(b) => iec_signed(b),
            Quantity::Count(n) => n.to_string(),
            Quantity::Ratio(r) => format!("{:.0}%", r * 100.0),
            Quantity::Seconds(s) => format!("{s:.1} s"),
        }
    }

    fn number(self) -> Number {
        match self {
            Quantity::Bytes(b) | Quantity::Count(b) => Number::Unsigned(b),
            Quantity::SignedBytes(b) => Number::Signed(b),
            Quantity::Ratio(f) | Quantity::Seconds(f) => Number::Float(f),
        }
    }

    fn from_wire(number: Number, unit: Unit) -> Option<Quantity> {
        Some(match (unit, number) {
            (Unit::Bytes, Number::Unsigned(b)) => Quantity::Bytes(b),
            (Unit::Bytes, Number::Signed(b)) => Quantity::SignedBytes(b),
            (Unit::Count, Number::Unsigned(n)) => Quantity::Count(n),
            (Unit::Ratio, n) => Quantity::Ratio(n.as_f64()),
            (Unit::Seconds, n) => Quantity::Seconds(n.as_f64()),
            _ => return None,
        })
    }
}

/// A JSON number as serde reads it: integers stay integers.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Unsigned(n) => n as f64,
            Number::Signed(n) => n as f64,
            Number::Float(f) => f,
        }
    }
}

/// One value that was read, and where it was read from. See the module docs for JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "EvidenceWire", from = "EvidenceWire")]
pub struct Evidence {
    pub label: String,
    /// The value as people read it.
    pub value: String,
    /// The measurement behind `value`, where it is one.
    pub quantity: Option<Quantity>,
    /// The file or command the value came from, e.g. `/proc/sys/vm/overcommit_memory`.
    pub source: String,
}

#[derive(Serialize, Deserialize)]
struct EvidenceWire {
    label: String,
    value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quantity: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unit: Option<Unit>,
    source: String,
}

impl From<Evidence> for EvidenceWire {
    fn from(e: Evidence) -> Self {
        EvidenceWire {
            label: e.label,
            value: e.value,
            quantity: e.quantity.map(Quantity::number),
            unit: e.quantity.map(Quantity::unit),
            source: e.source,
        }
    }
}

impl From<EvidenceWire> for Evidence {
    fn from(w: EvidenceWire) -> Self {
        Evidence {
            label: w.label,
            value: w.value,
            quantity: w
                .quantity
                .zip(w.unit)
                .and_then(|(n, u)| Quantity::from_wire(n, u)),
            source: w.source,
        }
    }
}

impl Evidence {
    /// Evidence that is not one measurement: a path, a setting, a line of a log.
    pub fn text(
        label: impl Into<String>,
        value: impl Into<String>,
        source: impl Into<String>,
    ) -> Self {
        Evidence {
            label: label.into(),
            value: value.into(),
            quantity: None,
            source: source.into(),
        }
    }

    /// A measurement, its text made by [`Quantity::text`].
    pub fn measured(label: impl Into<String>, q: Quantity, source: impl Into<String>) -> Self {
        Evidence {
            label: label.into(),
            value: q.text(),
            quantity: Some(q),
            source: source.into(),
        }
    }

    pub fn bytes(label: impl Into<String>, bytes: u64, source: impl Into<String>) -> Self {
        Self::measured(label, Quantity::Bytes(bytes), source)
    }

    pub fn count(label: impl Into<String>, n: u64, source: impl Into<String>) -> Self {
        Self::measured(label, Quantity::Count(n), source)
    }

    /// Bytes, or `unreadable` (never 0) when they could not be read.
    pub fn bytes_or_unreadable(
        label: impl Into<String>,
        bytes: Option<u64>,
        source: impl Into<String>,
    ) -> Self {
        match bytes {
            Some(b) => Self::bytes(label, b, source),
            None => Self::text(label, "unreadable", source),
        }
    }

    /// A count, or `unreadable` (never 0) when it could not be read.
    pub fn count_or_unreadable(
        label: impl Into<String>,
        n: Option<u64>,
        source: impl Into<String>,
    ) -> Self {
        match n {
            Some(n) => Self::count(label, n, source),
            None => Self::text(label, "unreadable", source),
        }
    }

    /// Attaches the measurement behind a value whose text says more than the number
    /// (`3.2 GiB (12% of RAM)`).
    pub fn with_quantity(mut self, q: Quantity) -> Self {
        self.quantity = Some(q);
        self
    }

    /// As [`with_quantity`](Self::with_quantity), for a measurement that may be unreadable.
    pub fn with_optional_quantity(mut self, q: Option<Quantity>) -> Self {
        self.quantity = q;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier from the registry in `model::ids`, e.g.
    /// `overcommit.no-headroom`.
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub evidence: Vec<Evidence>,
    /// One line on why it matters for ML jobs.
    pub why: String,
    /// The exact fix (commands or config), empty when nothing needs doing.
    pub fix: String,
    /// How sure the diagnosis is and whom it points at; for findings that name a cause
    /// of failure (a log's or a supervised job's), not for a passing check.
    #[serde(default, flatten)]
    pub assessment: Option<Assessment>,
}

impl Finding {
    /// The value of the evidence labelled `label`, if the finding has one.
    pub fn evidence_value(&self, label: &str) -> Option<&str> {
        self.evidence
            .iter()
            .find(|e| e.label == label)
            .map(|e| e.value.as_str())
    }
}

/// How sure a diagnosis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Only consistent with the text: one of several causes.
    Possible,
    /// The usual cause of what was seen, not proven by it (a bare `Killed`, exit 137).
    Likely,
    /// The text proves it (the kernel's own report), or the system confirmed it while
    /// the job ran.
    Confirmed,
}

impl Certainty {
    pub fn as_str(self) -> &'static str {
        match self {
            Certainty::Possible => "possible",
            Certainty::Likely => "likely",
            Certainty::Confirmed => "confirmed",
        }
    }
}

/// The kind of cause a finding points at: whom to call, as GPU triage tags each Xid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// The job needs more than it was given (memory, GPU memory): size it or the machine.
    Capacity,
    /// A setting or limit of the machine, container or scheduler (/dev/shm, ulimit, sysctl).
    Configuration,
    /// The program's own code or its libraries (an index out of range, a leak, a crash).
    UserCode,
    /// The GPU driver, CUDA, or the kernel.
    Driver,
    /// Failing hardware: GPU memory, RAM, a disk, the bus.
    Hardware,
}

impl CauseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::Capacity => "capacity",
            CauseKind::Configuration => "configuration",
            CauseKind::UserCode => "user code",
            CauseKind::Driver => "driver",
            CauseKind::Hardware => "hardware",
        }
    }
}

/// How sure, what kind of cause, and what would confirm it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    pub certainty: Certainty,
    pub cause: CauseKind,
    /// The one check that would confirm it; empty when it is confirmed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub confirm: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_json_keeps_the_text_and_adds_the_number() {
        let e = Evidence::text("MemAvailable", "3.0 GiB (12% of RAM)", "/proc/meminfo")
            .with_quantity(Quantity::Bytes(3 << 30));
        let v = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(v["value"], "3.0 GiB (12% of RAM)");
        assert_eq!(v["quantity"], 3u64 << 30);
        assert!(v["quantity"].is_u64());
        assert_eq!(v["unit"], "bytes");
        let back: Evidence = serde_json::from_value(v).unwrap_or_else(|_| unreachable!());
        assert_eq!(back, e);
    }

    #[test]
    fn text_evidence_has_no_quantity_or_unit() {
        let v =
            serde_json::to_value(Evidence::text("fs", "tmpfs", "mountinfo")).unwrap_or_default();
        assert!(
            v.get("quantity").is_none() && v.get("unit").is_none(),
            "{v}"
        );
    }

    #[test]
    fn each_unit_round_trips() {
        for q in [
            Quantity::Bytes(u64::MAX),
            Quantity::SignedBytes(-(1 << 30)),
            Quantity::Count(7),
            Quantity::Ratio(0.25),
            Quantity::Seconds(1.5),
        ] {
            let e = Evidence::measured("x", q, "y");
            let s = serde_json::to_string(&e).unwrap_or_default();
            let back: Evidence = serde_json::from_str(&s).unwrap_or_else(|_| unreachable!());
            assert_eq!(back.quantity, Some(q), "{s}");
        }
        assert_eq!(Quantity::SignedBytes(-(1 << 30)).text(), "-1.0 GiB");
        assert_eq!(Quantity::Ratio(0.25).text(), "25%");
    }
}
