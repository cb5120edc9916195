//! Durations with units: "20ms", "1.5s", "250us", "100ns", "2min"; sizes
//! ("756GiB"); distributions of durations. The one parser of each: the
//! scenario, the kernel's and the machine's configuration and the binding
//! all read them here.

use crate::engine::rng::Dist;
use crate::error::{Location, Result, SimError};

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

/// A duration or a distribution of durations at `key`: `"20ms"`, `{exp =
/// "1ms"}`, `{uniform = ["1ms", "2ms"]}`, `{normal = ["5ms", "1ms"]}`,
/// `{lognormal = ["5ms", "20ms"]}` (mean, sd).
pub(crate) fn dist_at(v: &toml::Value, file: &str, key: &str) -> Result<Dist> {
    let accepted =
        "a duration string (\"20ms\") or {exp = D}, {uniform = [D, D]}, {normal = [mean, sd]}, {lognormal = [mean, sd]}";
    match v {
        toml::Value::String(s) => Ok(Dist::Const(duration_at(s, file, key)?)),
        toml::Value::Table(t) if t.len() == 1 => {
            let (k, val) = t.iter().next().expect("one entry");
            let sub = format!("{key}.{k}");
            let pair = |val: &toml::Value| -> Result<(u64, u64)> {
                match val.as_array().map(|a| a.as_slice()) {
                    Some([toml::Value::String(a), toml::Value::String(b)]) => {
                        Ok((duration_at(a, file, &sub)?, duration_at(b, file, &sub)?))
                    }
                    _ => Err(SimError::bad_value(file, &sub, "expected two duration strings", accepted)),
                }
            };
            match k.as_str() {
                "exp" => match val {
                    toml::Value::String(s) => Ok(Dist::Exp(duration_at(s, file, &sub)?)),
                    _ => Err(SimError::bad_value(file, &sub, "expected a duration string (the mean)", accepted)),
                },
                "uniform" => {
                    let (a, b) = pair(val)?;
                    if a > b {
                        return Err(SimError::bad_value(file, &sub, "low bound above high bound", accepted));
                    }
                    Ok(Dist::Uniform(a, b))
                }
                "normal" => {
                    let (m, sd) = pair(val)?;
                    Ok(Dist::Normal(m, sd))
                }
                "lognormal" => {
                    let (m, sd) = pair(val)?;
                    if m == 0 {
                        return Err(SimError::bad_value(file, &sub, "a mean of 0", accepted));
                    }
                    Ok(Dist::LogNormal(m, sd))
                }
                _ => Err(SimError::UnknownKey {
                    at: loc(file, &sub),
                    accepted: "exp, uniform, normal, lognormal".into(),
                }),
            }
        }
        _ => Err(SimError::bad_value(file, key, format!("unexpected value {v}"), accepted)),
    }
}

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

/// Parse a memory size: an integer with an optional unit, case-insensitive:
/// `B`, `K`/`KB`/`KiB`, `M`/`MB`/`MiB`, `G`/`GB`/`GiB`, `T`/`TB`/`TiB`, with
/// optional spaces between. Every unit is a power of 1024, as in the kernel's
/// memparse ("4G" is 4 << 30). Returns None on malformed input or overflow.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits_end == 0 {
        return None;
    }
    let n: u64 = s[..digits_end].parse().ok()?;
    let unit = s[digits_end..].trim().to_ascii_lowercase();
    let shift = match unit.as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// Parse a memory bandwidth: a decimal number and a unit GB/s, MB/s
/// (powers of 1000, as STREAM and vendors quote them) or GiB/s, MiB/s
/// (powers of 1024): bytes per second. None on malformed input, zero or
/// overflow.
pub fn parse_mem_rate(s: &str) -> Option<u64> {
    let s = s.trim();
    let num_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let n: f64 = s[..num_end].parse().ok()?;
    let mult = match s[num_end..].trim() {
        "GB/s" => 1e9,
        "MB/s" => 1e6,
        "GiB/s" => (1u64 << 30) as f64,
        "MiB/s" => (1u64 << 20) as f64,
        _ => return None,
    };
    let b = (n * mult).round();
    (b >= 1.0 && b < u64::MAX as f64).then_some(b as u64)
}

pub(crate) const MEM_RATE_ACCEPTED: &str =
    "a rate with a unit GB/s or MB/s (powers of 1000) or GiB/s or MiB/s, e.g. \"99.5GB/s\", \"4.9GB/s\"";

pub(crate) const SIZE_ACCEPTED: &str = "an integer with an optional unit B, K/KiB, M/MiB, G/GiB or T/TiB \
    (powers of 1024), e.g. \"64GiB\", \"512MiB\", \"4G\"";

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
