//! Typed values of command-line options, parsed once by clap: sizes, offsets,
//! sampling intervals and the doctor's profile. A bad value is a usage error that
//! names the option and says what works.

use std::str::FromStr;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use memtriage_core::model::units::parse_size;
use memtriage_core::usecase::doctor::Profile;
use memtriage_core::usecase::inspect::SortKey;

/// A size of at least one byte: `4G`, `512MiB`, `1.5g`, `65536` (powers of 1024).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_size(text).map(ByteSize)
    }
}

/// A memory limit for `run --limit`: a size of at least the engine's floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit(pub u64);

impl FromStr for MemoryLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = parse_size(text)?;
        match memtriage_core::usecase::run::limit_too_small(bytes) {
            Some(why) => Err(why),
            None => Ok(MemoryLimit(bytes)),
        }
    }
}

/// Reader threads for `warm`: at least one, at most the engine's maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadCount(pub usize);

impl FromStr for ThreadCount {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let max = memtriage_core::usecase::warm::MAX_THREADS;
        text.parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .map(ThreadCount)
            .ok_or_else(|| format!("choose between 1 and {max}"))
    }
}

/// A position in a file: a size, or zero (the start), which is no size at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteOffset(pub u64);

impl FromStr for ByteOffset {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match parse_size(text) {
            Ok(bytes) => Ok(ByteOffset(bytes)),
            Err(_) if is_zero_size(text) => Ok(ByteOffset(0)),
            Err(e) => Err(e),
        }
    }
}

/// `0`, `0G`, `0.0MiB`: a zero with a unit the size parser knows.
fn is_zero_size(text: &str) -> bool {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    number.parse::<f64>() == Ok(0.0) && parse_size(&format!("1{unit}")).is_ok()
}

/// Time between samples: a number with a unit (`500ms`, `2s`, `1.5s`, `1m`, `1h`),
/// from 10ms to 1h inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval(pub Duration);

impl Interval {
    pub const MIN: Duration = Duration::from_millis(10);
    pub const MAX: Duration = Duration::from_secs(3600);
}

/// Written back the way a user would type it, so `--help` shows the engine's default.
impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0.as_millis();
        if ms % 1000 == 0 {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

const UNITS: [(&str, u64); 4] = [
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

impl FromStr for Interval {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let value: f64 = number
            .parse()
            .map_err(|_| format!("{text:?} is not a duration (try 500ms, 2s)"))?;
        let unit = unit.trim();
        if unit.is_empty() {
            return Err(format!(
                "{text:?} has no unit: add a unit, e.g. 5s or 500ms"
            ));
        }
        let Some(&(_, nanos_per_unit)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use ms, s, m or h)"
            ));
        };
        // Whole nanoseconds, so the bounds compare exactly (10ms is 10ms, 1h is 1h).
        let nanos = (value * nanos_per_unit as f64).round();
        let in_range =
            nanos >= Interval::MIN.as_nanos() as f64 && nanos <= Interval::MAX.as_nanos() as f64;
        if !in_range {
            return Err(format!("{text:?}: choose between 10ms and 1h"));
        }
        Ok(Interval(Duration::from_nanos(nanos as u64)))
    }
}

/// `--profile`: the engine's own [`Profile`], listed in `--help` with what each is for.
pub fn profile_parser() -> impl TypedValueParser<Value = Profile> {
    PossibleValuesParser::new(Profile::ALL.map(|p| PossibleValue::new(p.as_str()).help(help(p))))
        .try_map(|name| name.parse::<Profile>())
}

/// `--sort`: the engine's keys, so the CLI cannot offer one it does not know.
pub fn sort_parser() -> impl TypedValueParser<Value = SortKey> {
    PossibleValuesParser::new(SortKey::ALL.map(|k| PossibleValue::new(k.as_str())))
        .try_map(|name| name.parse::<SortKey>())
}

fn help(profile: Profile) -> &'static str {
    match profile {
        Profile::Training => "A dedicated training machine: one big job owns the memory",
        Profile::Inference => {
            "A serving machine: latency matters, models are mapped and must stay resident"
        }
        Profile::Shared => "A machine shared by many users' jobs",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_too_small_to_start_a_job_is_refused() {
        assert!("1".parse::<MemoryLimit>().is_err());
        assert!("4k"
            .parse::<MemoryLimit>()
            .unwrap_err()
            .contains("killed while it starts"));
        assert_eq!("4M".parse(), Ok(MemoryLimit(4 << 20)));
    }

    #[test]
    fn sizes_are_the_engines() {
        assert_eq!("4G".parse(), Ok(ByteSize(4 << 30)));
        assert_eq!("65536".parse(), Ok(ByteSize(65536)));
        assert!("0".parse::<ByteSize>().is_err(), "a limit of 0 is no limit");
        assert!("lots".parse::<ByteSize>().unwrap_err().contains("try 4G"));
    }

    #[test]
    fn thread_counts_are_between_one_and_the_engines_maximum() {
        assert_eq!("1".parse(), Ok(ThreadCount(1)));
        assert_eq!("64".parse(), Ok(ThreadCount(64)));
        for bad in ["0", "65", "-1", "four", ""] {
            assert_eq!(
                bad.parse::<ThreadCount>(),
                Err("choose between 1 and 64".to_string()),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_offset_of_zero_is_the_start_of_the_file() {
        assert_eq!("0".parse(), Ok(ByteOffset(0)));
        assert_eq!("0G".parse(), Ok(ByteOffset(0)));
        assert_eq!("1G".parse(), Ok(ByteOffset(1 << 30)));
        assert!("0X".parse::<ByteOffset>().is_err());
        assert!("-1".parse::<ByteOffset>().is_err());
        assert!("".parse::<ByteOffset>().is_err());
    }

    #[test]
    fn intervals_take_a_unit_and_inclusive_bounds() {
        let ms = |n| Ok(Interval(Duration::from_millis(n)));
        assert_eq!("500ms".parse(), ms(500));
        assert_eq!("2s".parse(), ms(2000));
        assert_eq!("1.5s".parse(), ms(1500));
        assert_eq!("1m".parse(), ms(60_000));
        assert_eq!("10ms".parse(), Ok(Interval(Interval::MIN)));
        for typed in ["500ms", "2s", "10ms"] {
            assert_eq!(
                typed.parse::<Interval>().map(|i| i.to_string()),
                Ok(typed.into())
            );
        }
        assert_eq!("1h".parse(), Ok(Interval(Interval::MAX)));
        assert_eq!("60m".parse(), Ok(Interval(Interval::MAX)));
    }

    #[test]
    fn a_bare_number_is_refused_with_the_fix() {
        let e = "5".parse::<Interval>().unwrap_err();
        assert!(e.contains("add a unit, e.g. 5s or 500ms"), "{e}");
    }

    #[test]
    fn out_of_range_intervals_name_the_real_bounds() {
        for text in ["9ms", "0s", "1.01h", "61m"] {
            let e = text.parse::<Interval>().unwrap_err();
            assert!(e.contains("between 10ms and 1h"), "{text}: {e}");
        }
        assert!("soon".parse::<Interval>().is_err());
        assert!("5d"
            .parse::<Interval>()
            .unwrap_err()
            .contains("unknown unit"));
    }

    #[test]
    fn every_profile_parses_back_from_its_name() {
        for p in Profile::ALL {
            assert_eq!(p.as_str().parse::<Profile>(), Ok(p));
        }
        assert!("gaming"
            .parse::<Profile>()
            .unwrap_err()
            .contains("training"));
    }
}

/// `serve --group`: a grouping mode, or `NAME=REGEX` (a named group of processes
/// whose command line matches).
#[derive(Debug, Clone)]
pub enum GroupSpec {
    Job,
    Cgroup,
    Pattern(String, regex::Regex),
}

impl FromStr for GroupSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "job" => return Ok(GroupSpec::Job),
            "cgroup" | "container" => return Ok(GroupSpec::Cgroup),
            _ => {}
        }
        let (name, pattern) = text.split_once('=').ok_or_else(|| {
            format!(
                "{text:?}: expected job, cgroup, or NAME=REGEX (e.g. trainers='python .*train')"
            )
        })?;
        if name.is_empty() {
            return Err(format!("{text:?}: the group needs a name before '='"));
        }
        let re = regex::Regex::new(pattern)
            .map_err(|e| format!("{text:?}: not a regular expression: {e}"))?;
        Ok(GroupSpec::Pattern(name.to_string(), re))
    }
}

/// How long history is kept: `7d`, `12h`, `90m` (a minute to ten years).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention(pub Duration);

/// How far back to look: `30s`, `10m`, `2d` (a second to ten years).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since(pub Duration);

impl FromStr for Since {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match age(text)? {
            s if (1..=10 * 365 * 86_400).contains(&s) => Ok(Since(Duration::from_secs(s))),
            _ => Err(format!("{text:?}: choose between 1s and 3650d")),
        }
    }
}

/// `7d`, `12h`, `90m`, `30s` in seconds.
fn age(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 7d, 12h)"))?;
    let seconds = match unit.trim() {
        "d" => n.checked_mul(86_400),
        "h" => n.checked_mul(3_600),
        "m" => n.checked_mul(60),
        "s" => Some(n),
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use d, h, m or s)"
            ))
        }
    };
    seconds.ok_or_else(|| format!("{text:?}: too long"))
}

impl FromStr for Retention {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match age(text)? {
            s if (60..=10 * 365 * 86_400).contains(&s) => Ok(Retention(Duration::from_secs(s))),
            _ => Err(format!("{text:?}: choose between 1m and 3650d")),
        }
    }
}
