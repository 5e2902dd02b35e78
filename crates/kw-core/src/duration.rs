//! Durations as people write them (`90`, `90s`, `15m`, `1h`, `250ms`) and shares of time
//! (`0.1`, `10%`): the `kw` command line and the runtime's `KW_TUNE_*` variables read the same
//! spellings.

use std::time::Duration;

/// The longest duration kw takes: 100 years (a deadline further away does not fit a clock's
/// instant everywhere, and means "no limit" anyway).
pub const LONGEST: Duration = Duration::from_secs(100 * 365 * 86400);

/// `secs` seconds as a [`Duration`], saturating: below 0 or NaN is zero, beyond
/// [`LONGEST`] is [`LONGEST`] (for times computed from measurements or read from files, which
/// `Duration::from_secs_f64` would panic on).
pub fn saturating_secs(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        Duration::ZERO
    } else if secs >= LONGEST.as_secs_f64() {
        LONGEST
    } else {
        Duration::from_secs_f64(secs)
    }
}

/// Parses `90` (seconds), `90s`, `250ms`, `15m` / `15min`, `1h`, at most [`LONGEST`]. Returns
/// why not.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad duration `{text}`"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("bad duration unit in `{text}` (use ms, s, m or h)")),
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("bad duration `{text}`"));
    }
    if secs > LONGEST.as_secs_f64() {
        return Err(format!("bad duration `{text}`: more than 100 years"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a share of time in (0, 1]: `0.1` or `10%`. Returns why not.
pub fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!(
            "`{text}` is not a share of the time in (0, 1] (e.g. 0.1 or 10%)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 2m "), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "x", "5d", "-1s", "infs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        // Past 100 years: an error, never a panic (`Duration::from_secs_f64` panicked on
        // 99999999999999999999h, and a deadline that far does not fit an instant).
        let e = parse_duration("99999999999999999999h").unwrap_err();
        assert!(e.contains("more than 100 years"), "{e}");
        assert!(parse_duration("876000h").is_ok());
        assert_eq!(saturating_secs(f64::MAX), LONGEST);
        assert_eq!(saturating_secs(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_secs(-1.0), Duration::ZERO);
        assert_eq!(saturating_secs(1.5), Duration::from_millis(1500));
    }

    #[test]
    fn shares() {
        assert_eq!(parse_share("0.1"), Ok(0.1));
        assert_eq!(parse_share("25%"), Ok(0.25));
        assert_eq!(parse_share("1"), Ok(1.0));
        for bad in ["0", "-0.1", "1.5", "x", "150%", "NaN"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
    }
}
