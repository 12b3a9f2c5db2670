//! `/proc/uptime`.

use crate::parse::ParseError;

/// Seconds since boot (the first of the two numbers; the second is idle time).
pub fn parse(text: &str) -> Result<f64, ParseError> {
    text.split_ascii_whitespace()
        .next()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| ParseError::new("uptime", format!("not seconds: {:?}", text.trim())))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn seconds_since_boot() {
        assert_eq!(parse("7300.10 9000.00\n").ok(), Some(7300.1));
        assert!(parse("").is_err());
        assert!(parse("-1 2").is_err());
        assert!(parse("NaN 2").is_err());
        assert_eq!(
            parse("x 1").map_err(|e| e.to_string()),
            Err("not seconds: \"x 1\"".to_string())
        );
    }
}
