//! Speed ratios in words: "1.23x faster" or "1.18x slower", never "0.82x faster".

/// How `new_ms` compares with `baseline_ms` (both times, lower is better): `1.23x faster`,
/// `1.18x slower` or `as fast` (within 0.5%).
pub fn ratio_words(baseline_ms: f64, new_ms: f64) -> String {
    if !(baseline_ms > 0.0 && new_ms > 0.0) {
        return "not comparable".into();
    }
    let r = baseline_ms / new_ms;
    if (r - 1.0).abs() < 0.005 {
        "as fast".into()
    } else if r > 1.0 {
        format!("{r:.2}x faster")
    } else {
        format!("{:.2}x slower", 1.0 / r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_below_one_read_as_slower() {
        assert_eq!(ratio_words(1.23, 1.0), "1.23x faster");
        assert_eq!(ratio_words(1.0, 1.18), "1.18x slower");
        assert_eq!(ratio_words(1.0, 1.001), "as fast");
        assert_eq!(ratio_words(0.0, 1.0), "not comparable");
    }
}
