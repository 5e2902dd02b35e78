//! Helpers shared by the bench binaries of this crate.

/// The number after `name` on the command line (`--n 4096`), else `default`.
pub fn arg_value(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median (upper median for an even count) of non-empty samples.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
