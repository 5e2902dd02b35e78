//! Durations as people write them (`90`, `90s`, `15m`, `1h`, `250ms`) and shares of time
//! (`0.1`, `10%`): the `kw` command line and the runtime's `KW_TUNE_*` variables read the same
//! spellings.

use std::time::Duration;

/// Parses `90` (seconds), `90s`, `250ms`, `15m` / `15min`, `1h`. Returns why not.
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
