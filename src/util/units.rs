//! Sizes with explicit units: parsing `--sizes` and formatting bytes.
//!
//! Binary units are `KiB MiB GiB TiB` (2^10...), decimal units are
//! `kB KB MB GB TB` (10^3...), a bare number or `B` is bytes. A bare `K`,
//! `M` or `G` is refused: it is exactly the MB-vs-MiB ambiguity users
//! complain about (sysbench#30, iperf#173).

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum SizeError {
    #[error("'{0}' is not a size: write a number with a unit, like 16KiB, 8MiB, 1GiB or 1GB")]
    NotASize(String),
    #[error("'{0}' has unit '{1}', which is ambiguous or unknown: use KiB/MiB/GiB (binary) or kB/MB/GB (decimal)")]
    BadUnit(String, String),
    #[error("'{0}' is zero: sizes must be at least 1 byte")]
    Zero(String),
    #[error("'{0}' is too large: the largest size accepted is 1 TiB")]
    TooLarge(String),
    #[error(
        "range '{0}' is malformed: write FROM..TO:xFACTOR (e.g. 1KiB..1GiB:x2) or FROM..TO:+STEP"
    )]
    BadRange(String),
    #[error("'{text}' has too many points ({points} > {cap}): use a larger factor or step, or fewer ranges")]
    TooManyPoints { text: String, points: u64, cap: u64 },
}

/// Most sizes one list may expand to, ranges and single sizes together.
/// The default cache sweep has about 40; 10,000 points at the shortest
/// sample setting already take hours, and counting before allocating keeps
/// a typo like `x1.00000001` from asking for gigabytes.
pub const MAX_POINTS: u64 = 10_000;

/// The largest size any suite accepts (sanity bound, not a limit of the
/// machine: that is checked against MemAvailable separately).
pub const MAX_SIZE: u64 = 1 << 40;

/// Parse a duration like `5m`, `30s`, `500ms`, `1h`, `1.5s`; a bare
/// number is seconds. Between 1 ms and 7 days: a watch interval outside
/// that is a typo, not a plan.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: use e.g. 5m, 30s, 500ms or 1h"))?;
    let secs = value
        * match unit.trim() {
            "" | "s" => 1.0,
            "ms" => 1e-3,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            u => return Err(format!("'{text}': unknown unit '{u}': use ms, s, m or h")),
        };
    if !(1e-3..=7.0 * 86400.0).contains(&secs) {
        return Err(format!("'{text}' is outside 1ms..7d"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Parse one size like `16KiB`, `1.5MiB`, `4096`, `1GB`.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(SizeError::NotASize(text.into()));
    }
    let value: f64 = num.parse().map_err(|_| SizeError::NotASize(text.into()))?;
    let mult: f64 = match unit.trim() {
        "" | "B" | "b" => 1.0,
        "KiB" | "kiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024f64.powi(4),
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        u if u.starts_with('e') || u.starts_with('E') => {
            // 1e99 and friends: scientific notation is a number, and such a
            // number is far too large or not integral; say which.
            return match t.parse::<f64>() {
                Ok(v) if v >= MAX_SIZE as f64 => Err(SizeError::TooLarge(text.into())),
                Ok(v) if v >= 1.0 => Ok(v as u64),
                Ok(_) => Err(SizeError::Zero(text.into())),
                Err(_) => Err(SizeError::NotASize(text.into())),
            };
        }
        u => return Err(SizeError::BadUnit(text.into(), u.into())),
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes > MAX_SIZE as f64 {
        return Err(SizeError::TooLarge(text.into()));
    }
    let bytes = bytes.round() as u64;
    if bytes == 0 {
        return Err(SizeError::Zero(text.into()));
    }
    Ok(bytes)
}

/// Parse a bandwidth like `409.6GB/s`, `409.6 GB/s`, `381.5GiB/s` or a
/// bare `409.6` (GB/s) into GB/s (10^9 B/s); the error says what is
/// accepted.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad =
        || format!("'{text}' is not a bandwidth: write e.g. 409.6GB/s, 381.5GiB/s or 409.6 (GB/s)");
    let v: f64 = num.parse().map_err(|_| bad())?;
    let mult = match unit.trim().trim_end_matches("/s") {
        "" | "GB" => 1.0,
        "GiB" => (1u64 << 30) as f64 / 1e9,
        "TB" => 1e3,
        "MB" => 1e-3,
        _ => return Err(bad()),
    };
    let g = v * mult;
    if !(g.is_finite() && g > 0.0 && g < 1e6) {
        return Err(format!("'{text}': a DRAM peak is above 0 and below 1 PB/s"));
    }
    Ok(g)
}

/// Parse a comma-separated list of sizes and ranges, e.g.
/// `16KiB,256KiB,8MiB` or `1KiB..1GiB:x2` or `4KiB..64KiB:+4KiB`.
/// Result is sorted and deduplicated.
pub fn parse_size_list(text: &str) -> Result<Vec<u64>, SizeError> {
    let mut out = Vec::new();
    // Points planned so far; every range is counted before it is expanded.
    let mut planned: u64 = 0;
    let mut admit = |n: u64| {
        planned = planned.saturating_add(n);
        if planned > MAX_POINTS {
            Err(SizeError::TooManyPoints {
                text: text.chars().take(80).collect(),
                points: planned,
                cap: MAX_POINTS,
            })
        } else {
            Ok(())
        }
    };
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some((from, rest)) = item.split_once("..") {
            let (to, step) = rest
                .split_once(':')
                .ok_or_else(|| SizeError::BadRange(item.into()))?;
            let from = parse_size(from)?;
            let to = parse_size(to)?;
            if to < from {
                return Err(SizeError::BadRange(item.into()));
            }
            if let Some(f) = step.strip_prefix('x') {
                let f: f64 = f.parse().map_err(|_| SizeError::BadRange(item.into()))?;
                if !(f > 1.0 && f.is_finite()) {
                    return Err(SizeError::BadRange(item.into()));
                }
                admit(geometric_count(from, to, f))?;
                out.extend(geometric(from, to, f));
            } else if let Some(s) = step.strip_prefix('+') {
                let s = parse_size(s)?;
                let count = (to - from) / s + 1;
                admit(count)?;
                out.extend((0..count).map(|i| from + i * s));
            } else {
                return Err(SizeError::BadRange(item.into()));
            }
        } else {
            admit(1)?;
            out.push(parse_size(item)?);
        }
    }
    if out.is_empty() {
        return Err(SizeError::NotASize(text.into()));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// How many points [`geometric`] yields before deduplication, without
/// building them: log(to/from) / log(factor) + 1, saturating.
pub fn geometric_count(from: u64, to: u64, factor: f64) -> u64 {
    if !(factor > 1.0 && factor.is_finite()) || from == 0 || to < from {
        return u64::MAX;
    }
    // The same tolerance as the loop below (to × 1.0001).
    let n = ((to as f64 * 1.0001) / from as f64).ln() / factor.ln();
    if n.is_finite() && n >= 0.0 {
        (n.floor() as u64).saturating_add(1)
    } else {
        u64::MAX
    }
}

/// from, from*f, from*f^2, ... up to and including `to` (within rounding).
/// Callers bound the count with [`geometric_count`] first.
pub fn geometric(from: u64, to: u64, factor: f64) -> Vec<u64> {
    let mut v = Vec::with_capacity(geometric_count(from, to, factor).min(MAX_POINTS) as usize);
    let mut x = from as f64;
    while x <= to as f64 * 1.0001 {
        v.push((x.round() as u64).min(to.max(from)));
        x *= factor;
    }
    v.dedup();
    v
}

/// Format bytes with a binary unit, exact where possible: `16 KiB`,
/// `1.5 MiB`, `1000 B`.
pub fn format_bytes(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{} B", b)
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, U[i])
    } else if v < 10.0 {
        format!("{:.2} {}", v, U[i])
    } else {
        format!("{:.1} {}", v, U[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_their_unit_and_bounds() {
        let d = |t| parse_duration(t).map(|d| d.as_secs_f64());
        assert_eq!(d("5m"), Ok(300.0));
        assert_eq!(d("30s"), Ok(30.0));
        assert_eq!(d("10"), Ok(10.0));
        assert_eq!(d("1h"), Ok(3600.0));
        assert!((d("10ms").unwrap() - 0.01).abs() < 1e-12);
        for bad in ["", "5x", "-1s", "0s", "8d", "1e9", "m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_parse_with_their_unit() {
        assert_eq!(parse_rate("409.6GB/s"), Ok(409.6));
        assert_eq!(parse_rate(" 409.6 GB/s "), Ok(409.6));
        assert_eq!(parse_rate("409.6"), Ok(409.6));
        assert!((parse_rate("1GiB/s").unwrap() - 1.073741824).abs() < 1e-12);
        assert_eq!(parse_rate("1.2TB/s"), Ok(1200.0));
        for bad in ["", "fast", "12 furlongs", "-3GB/s", "0", "1e9GB/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("GB/s") || e.contains("PB/s"), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5MiB"), Ok(1_572_864));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64B"), Ok(64));
        assert_eq!(parse_size("1e3"), Ok(1000));
    }

    #[test]
    fn rejects_bad_sizes() {
        assert_eq!(parse_size("0"), Err(SizeError::Zero("0".into())));
        assert_eq!(parse_size("1e99"), Err(SizeError::TooLarge("1e99".into())));
        assert!(matches!(parse_size("abc"), Err(SizeError::NotASize(_))));
        assert!(matches!(parse_size("16K"), Err(SizeError::BadUnit(..))));
        assert!(matches!(parse_size("2TiB"), Err(SizeError::TooLarge(_))));
        assert!(matches!(parse_size(""), Err(SizeError::NotASize(_))));
    }

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(
            parse_size_list("16KiB,256KiB,8MiB,1GiB").unwrap(),
            vec![16384, 262144, 8 << 20, 1 << 30]
        );
        let r = parse_size_list("1KiB..1GiB:x2").unwrap();
        assert_eq!(r.len(), 21);
        assert_eq!(r[0], 1024);
        assert_eq!(*r.last().unwrap(), 1 << 30);
        assert_eq!(
            parse_size_list("4KiB..16KiB:+4KiB").unwrap(),
            vec![4096, 8192, 12288, 16384]
        );
        assert!(parse_size_list("1KiB..1GiB").is_err());
        assert!(parse_size_list("1GiB..1KiB:x2").is_err());
        assert!(parse_size_list("1KiB..1GiB:x1").is_err());
        assert!(parse_size_list(",").is_err());
    }

    #[test]
    fn too_many_points_is_counted_before_allocating() {
        // 124,824 distinct sizes (hours of work): refused with the count.
        let e = parse_size_list("1KiB..1GiB:x1.0001").unwrap_err();
        assert!(
            matches!(
                e,
                SizeError::TooManyPoints {
                    cap: MAX_POINTS,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("too many points ("), "{e}");
        // 2.7 billion points: refused without asking for gigabytes.
        let e = parse_size_list("1..1TiB:x1.00000001").unwrap_err();
        let SizeError::TooManyPoints { points, .. } = e else {
            panic!("{e}")
        };
        assert!(points > 2_000_000_000, "{points}");
        // Linear ranges share the cap, and so does a list of many ranges.
        assert!(matches!(
            parse_size_list("1..1GiB:+1"),
            Err(SizeError::TooManyPoints { .. })
        ));
        let many = vec!["1KiB..2KiB:+1"; 20].join(",");
        assert!(matches!(
            parse_size_list(&many),
            Err(SizeError::TooManyPoints { .. })
        ));
        // Right at the cap is fine.
        assert_eq!(parse_size_list("1..10000:+1").unwrap().len(), 10_000);
        assert!(parse_size_list("1..10001:+1").is_err());
    }

    #[test]
    fn geometric_count_matches_the_points() {
        for (a, b, f) in [
            (1024u64, 1u64 << 30, 2.0),
            (4096, 1 << 20, 1.5),
            (1, 1000, 1.1),
        ] {
            let n = geometric_count(a, b, f);
            let mut x = a as f64;
            let mut raw = 0;
            while x <= b as f64 * 1.0001 {
                raw += 1;
                x *= f;
            }
            assert!(n.abs_diff(raw) <= 1, "{a}..{b}:x{f}: {n} vs {raw}");
        }
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(16384), "16 KiB");
        assert_eq!(format_bytes(1000), "1000 B");
        assert_eq!(format_bytes(1_572_864), "1.50 MiB");
        assert_eq!(format_bytes(1 << 30), "1 GiB");
    }
}
