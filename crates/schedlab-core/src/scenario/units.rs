//! Durations with units: "20ms", "1.5s", "250us", "100ns", "2min".

use crate::error::{Result, SimError};

/// Parse a duration string into ns. Err(text) says what is wrong.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(format!("\"{s}\" does not start with a number"));
    }
    let mult: f64 = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "" => return Err(format!("\"{s}\" has no unit")),
        _ => return Err(format!("\"{s}\" has an unknown unit \"{unit}\"")),
    };
    let v: f64 = num.parse().map_err(|_| format!("\"{num}\" is not a number"))?;
    let ns = v * mult;
    if !ns.is_finite() || ns > 1e19 {
        return Err(format!("\"{s}\" is too large"));
    }
    Ok(ns.round() as u64)
}

pub const DURATION_ACCEPTED: &str =
    "a string like \"20ms\", \"1.5s\", \"250us\", \"100ns\", \"2min\" (units ns, us, ms, s, min, h)";

/// A duration in ns for a message, exact and short: in the largest unit
/// (up to s; min and h when whole) with the decimals it needs (`4ms`,
/// `1.5ms`, `5.006123ms`, `2min`, `1ns`). It parses back to the same ns.
pub fn format_duration(ns: u64) -> String {
    for (unit, scale) in [("h", 3_600_000_000_000u64), ("min", 60_000_000_000)] {
        if ns >= scale && ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= scale {
            let (whole, frac) = (ns / scale, ns % scale);
            if frac == 0 {
                return format!("{whole}{unit}");
            }
            let digits = scale.ilog10() as usize;
            let frac = format!("{frac:0digits$}");
            return format!("{whole}.{}{unit}", frac.trim_end_matches('0'));
        }
    }
    format!("{ns}ns")
}

pub fn duration_at(s: &str, file: &str, key: &str) -> Result<u64> {
    parse_duration(s).map_err(|m| SimError::bad_value(file, key, m, DURATION_ACCEPTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_durations_parse_back() {
        for (ns, text) in [
            (4_000_000, "4ms"),
            (1_500_000, "1.5ms"),
            (5_006_123, "5.006123ms"),
            (120_000_000_000, "2min"),
            (3_600_000_000_000, "1h"),
            (90_000_000_000, "90s"),
            (1, "1ns"),
            (1_001, "1.001us"),
        ] {
            assert_eq!(format_duration(ns), text);
            assert_eq!(parse_duration(text), Ok(ns), "{text}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20ms"), Ok(20_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("100ns"), Ok(100));
        assert_eq!(parse_duration(" 2 min"), Ok(120_000_000_000));
        assert!(parse_duration("20").is_err());
        assert!(parse_duration("20 parsecs").is_err());
        assert!(parse_duration("ms").is_err());
    }
}
