//! Sizes people type: `4G`, `512MiB`, `1.5g`, `65536`.

use super::ParseError;

const WHAT: &str = "size";

/// Bytes for a size; K/M/G/T (with or without `i`/`B`) are powers of 1024, as in
/// `free -h`, Docker `--memory` and Kubernetes' `Gi`.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        ParseError::new(
            WHAT,
            format!("{text:?} is not a size (try 4G, 512M, 1.5GiB or a number of bytes)"),
        )
    })?;
    let shift = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches('b')
        .trim_end_matches('i')
    {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => {
            return Err(ParseError::new(
                WHAT,
                format!("{text:?}: unknown unit {unit:?} (use K, M, G or T)"),
            ))
        }
    };
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(ParseError::new(
            WHAT,
            format!("{text:?} is not a usable size"),
        ));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn units_are_powers_of_1024() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("2Gi"), Ok(2 << 30));
        assert_eq!(parse_size("100kB"), Ok(100 << 10));
    }

    #[test]
    fn nonsense_is_an_error_that_says_what_works() {
        assert!(parse_size("lots").unwrap_err().detail.contains("try 4G"));
        assert!(parse_size("4X")
            .unwrap_err()
            .detail
            .contains("unknown unit"));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1e400").is_err());
    }
}
