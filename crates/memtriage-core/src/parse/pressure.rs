//! `/proc/pressure/memory` (PSI, kernel ≥ 4.20), and the same format in a cgroup's
//! `memory.pressure`.

use crate::model::system::{MemoryPressure, PressureLine};
use crate::parse::ParseError;

/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=0` and the same for `full`
/// (`full` appeared in 5.x for memory; older kernels print only `some`).
pub fn parse(text: &str) -> Result<MemoryPressure, ParseError> {
    let mut p = MemoryPressure {
        some: None,
        full: None,
    };
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let kind = words.next();
        let mut values = [None, None, None];
        let mut total = None;
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                continue;
            };
            match k {
                "avg10" => values[0] = v.parse::<f64>().ok(),
                "avg60" => values[1] = v.parse::<f64>().ok(),
                "avg300" => values[2] = v.parse::<f64>().ok(),
                "total" => total = v.parse::<u64>().ok(),
                _ => {}
            }
        }
        let line = match (values, total) {
            ([Some(avg10), Some(avg60), Some(avg300)], Some(total_us)) => Some(PressureLine {
                avg10,
                avg60,
                avg300,
                total_us,
            }),
            _ => None,
        };
        match kind {
            Some("some") => p.some = line,
            Some("full") => p.full = line,
            _ => {}
        }
    }
    if p.some.is_none() && p.full.is_none() {
        return Err(ParseError::new(
            "memory pressure",
            "no some/full line with avg10, avg60, avg300 and total",
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn pressure_lines() {
        let p = parse("some avg10=1.50 avg60=0.20 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n").unwrap();
        assert_eq!(p.some.as_ref().map(|s| s.avg10), Some(1.5));
        assert_eq!(p.full.as_ref().map(|s| s.total_us), Some(7));
        let p = parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
        assert!(p.full.is_none());
        assert!(parse("garbage").is_err());
    }
}
