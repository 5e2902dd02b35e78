//! Safe file names for captures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest stem (in bytes) that [`sanitize_stem`] returns.
pub const MAX_STEM_LEN: usize = 120;

/// Turns arbitrary text into a file stem that stays inside its directory.
///
/// Keeps ASCII letters, digits, `-`, `+` and `=`; every other character (path separators, dots,
/// control characters, spaces, non-ASCII) becomes `_`; runs of `_` collapse to one and leading or
/// trailing `_` are dropped, so the result never contains `/`, `\`, `..` or a control character
/// and never starts with a dot. It is at most [`MAX_STEM_LEN`] bytes long; text with nothing
/// usable gives `capture`.
pub fn sanitize_stem(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_STEM_LEN));
    for c in text.chars() {
        let keep = c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '=');
        let c = if keep { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        if out.len() >= MAX_STEM_LEN {
            break;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("capture");
    }
    out
}

/// A file stem for a capture of `tuning_key` at `problem_size`: the sanitised key, the problem
/// size joined by `x`, and a short suffix unique within this process and unlikely to collide
/// across processes (time in milliseconds, process id and a counter, in hexadecimal).
///
/// `capture_file_stem("matmul/f32", &[512, 512, 1])` gives e.g.
/// `matmul_f32_512x512x1_19a4c3e5f10-3e8-0`.
pub fn capture_file_stem(tuning_key: &str, problem_size: &[u64]) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let size: Vec<String> = problem_size.iter().map(|v| v.to_string()).collect();
    let key = sanitize_stem(tuning_key);
    let key: String = key.chars().take(80).collect();
    let size = if size.is_empty() {
        "0".to_string()
    } else {
        size.join("x")
    };
    let size: String = size.chars().take(30).collect();
    format!("{key}_{size}_{millis:x}-{:x}-{n:x}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_stay_inside_the_directory() {
        for bad in [
            "../../etc/x",
            "/abs/path",
            "a\\b",
            "..",
            ".",
            "",
            "\u{0}\n\t",
            "ü/..",
            ".hidden",
        ] {
            let s = sanitize_stem(bad);
            assert!(
                !s.contains('/') && !s.contains('\\') && !s.contains(".."),
                "{bad:?} -> {s:?}"
            );
            assert!(!s.starts_with('.') && !s.is_empty(), "{bad:?} -> {s:?}");
            assert!(s.chars().all(|c| !c.is_control()), "{bad:?} -> {s:?}");
        }
        assert_eq!(sanitize_stem("../../etc/x"), "etc_x");
        assert_eq!(sanitize_stem("matmul-f32"), "matmul-f32");
        assert!(sanitize_stem(&"k".repeat(1000)).len() <= MAX_STEM_LEN);
    }

    #[test]
    fn stems_are_unique() {
        let a = capture_file_stem("../k", &[1, 2]);
        let b = capture_file_stem("../k", &[1, 2]);
        assert_ne!(a, b);
        assert!(a.starts_with("k_1x2_"), "{a}");
        assert_eq!(sanitize_stem(&a), a);
    }
}
