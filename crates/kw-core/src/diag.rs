//! Every message the libraries print goes through here: one line on standard error, prefixed
//! `kernel-wisdom:`, filtered by `KW_LOG` (`error`, `warn`, `info` (the default), `debug`;
//! `off` prints nothing), read once. Messages reported "once" are reported once per process,
//! through one set ([`once`]).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The environment variable that sets the level.
pub const LOG_ENV: &str = "KW_LOG";

/// How much is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing.
    Off,
    /// Only errors (something did not happen: a capture not written, ...).
    Error,
    /// Errors and warnings (wisdom ignored, a configuration that failed, ...).
    Warn,
    /// Also what capture wrote (the default).
    Info,
    /// Also every selection and every launch not captured, with the reasons.
    Debug,
}

impl Level {
    /// Parses a `KW_LOG` value (case-insensitive); `None` for anything else.
    pub fn parse(value: &str) -> Option<Level> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "quiet" => Some(Level::Off),
            "error" => Some(Level::Error),
            "warn" | "warning" => Some(Level::Warn),
            "info" | "" => Some(Level::Info),
            "debug" | "trace" => Some(Level::Debug),
            _ => None,
        }
    }
}

/// The level in effect (`KW_LOG`, read once; an unknown value is reported and means `info`).
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var(LOG_ENV) {
        Err(std::env::VarError::NotUnicode(v)) => {
            eprintln!("kernel-wisdom: {LOG_ENV}={v:?} is not valid UTF-8 text; using info");
            Level::Info
        }
        Err(_) => Level::Info,
        Ok(v) => Level::parse(&v).unwrap_or_else(|| {
            eprintln!(
                "kernel-wisdom: invalid {LOG_ENV}={v:?} (expected off, error, warn, info or \
                 debug); using info"
            );
            Level::Info
        }),
    })
}

/// Whether debug messages are printed.
pub fn debug_enabled() -> bool {
    level() >= Level::Debug
}

fn emit(at: Level, message: &str) {
    if level() >= at {
        eprintln!("kernel-wisdom: {}", printable(message));
    }
}

/// `text` with control characters other than line breaks and tabs written as escapes
/// (`\u{1b}`): a name read from a file (a tuning key, a path) must not drive the terminal.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if bad(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A measured value (a time in milliseconds, an objective's score) as messages and tables
/// print it: four decimals, or, from a billion up and for values that would print as 0 (a
/// value read from a file can be anything finite), in exponent notation (`1.0000e300`,
/// `1.0000e-300`), never hundreds of digits.
pub fn figure(v: f64) -> String {
    fixed_or_exponent(v, 4, 9)
}

/// `v` with `decimals` decimals when that takes at most `int_digits` digits before the point
/// and does not round a non-zero value to 0; else in exponent notation.
fn fixed_or_exponent(v: f64, decimals: usize, int_digits: usize) -> String {
    let text = format!("{v:.decimals$}");
    let vanishes = v != 0.0 && v.abs() < 0.5 * 10f64.powi(-(decimals as i32));
    if !v.is_finite()
        || (!vanishes && text.trim_start_matches('-').len() <= int_digits + 1 + decimals)
    {
        text
    } else {
        format!("{v:.decimals$e}")
    }
}

/// `text` for one line of a message: every control character escaped (line breaks and tabs
/// too: a name read from a file must not begin a line that looks like the program's own),
/// and at most `max_chars` characters of it, `...` marking a cut.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Prints an error.
pub fn error(message: &str) {
    emit(Level::Error, message);
}

/// Prints a warning.
pub fn warn(message: &str) {
    emit(Level::Warn, message);
}

/// Prints an informational line.
pub fn info(message: &str) {
    emit(Level::Info, message);
}

/// Prints a debug line.
pub fn debug(message: &str) {
    emit(Level::Debug, message);
}

/// Whether `key` is seen for the first time in this process: the one set behind every
/// "report once" message.
pub fn once(key: &str) -> bool {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    SEEN.get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key.to_string())
}

/// Prints a warning once per process (keyed by the message).
pub fn warn_once(message: &str) {
    if once(message) {
        warn(message);
    }
}

/// The value of environment variable `name`: `None` when unset, and when it is not valid UTF-8
/// text, which is warned about once (a setting that is ignored is said).
pub fn env_var(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            warn_once(&format!(
                "{name}={v:?} is not valid UTF-8 text: ignored, as if it were not set"
            ));
            None
        }
    }
}

/// Prints an error once per process for `key` (e.g. one kernel's capture failures).
pub fn error_once(key: &str, message: &str) {
    if once(key) {
        error(message);
    }
}

/// How `new_ms` compares with `baseline_ms` (both times, lower is better), in words:
/// `1.23x faster`, `1.18x slower` (never `0.85x faster`), `as fast` within 0.5%.
pub fn ratio_words(baseline_ms: f64, new_ms: f64) -> String {
    if !(baseline_ms > 0.0 && new_ms > 0.0) {
        return "not comparable".into();
    }
    let r = baseline_ms / new_ms;
    if !r.is_finite() || r == 0.0 {
        // Times read from a file whose ratio is past f64's range.
        let way = if baseline_ms > new_ms {
            "faster"
        } else {
            "slower"
        };
        return format!("more than {}x {way}", ratio(f64::MAX));
    }
    if (r - 1.0).abs() < 0.005 {
        "as fast".into()
    } else if r > 1.0 {
        format!("{}x faster", ratio(r))
    } else {
        format!("{}x slower", ratio(1.0 / r))
    }
}

/// A ratio as messages print it: two decimals, or, from ten million up and for ratios that
/// would print as 0 (times read from a file can make any ratio), in exponent notation.
pub fn ratio(r: f64) -> String {
    fixed_or_exponent(r, 2, 7)
}

/// `1 record`, `2 records`: a count and its noun (plural with an `s`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `12.0 MiB`, `512 B`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_every_control_character_and_cuts() {
        assert_eq!(one_line("evil\nkw tune: FAKE", 100), "evil\\nkw tune: FAKE");
        assert_eq!(one_line("a\tb\u{1b}[31m", 100), "a\\tb\\u{1b}[31m");
        assert_eq!(
            one_line(&"x".repeat(500), 10),
            format!("{}...", "x".repeat(10))
        );
        assert_eq!(one_line("short", 10), "short");
    }

    #[test]
    fn figures_are_short_whatever_the_value() {
        assert_eq!(figure(0.25), "0.2500");
        assert_eq!(figure(123456.789), "123456.7890");
        assert_eq!(figure(1e300), "1.0000e300");
        assert_eq!(figure(-2.5e12), "-2.5000e12");
        assert!(figure(f64::MAX).len() < 20);
        assert_eq!(figure(999999999.99999), "1.0000e9");
        assert_eq!(figure(999999999.9), "999999999.9000");
        assert_eq!(ratio(1.5), "1.50");
        assert_eq!(ratio(1e300), "1.00e300");
        assert_eq!(ratio_words(1e300, 1.0), "1.00e300x faster");
        // Values that would print as 0, and ratios past f64's range.
        assert_eq!(figure(1e-300), "1.0000e-300");
        assert_eq!(figure(0.00004), "4.0000e-5");
        assert_eq!(figure(0.0), "0.0000");
        assert_eq!(ratio(0.001), "1.00e-3");
        assert_eq!(ratio_words(1e300, 1e-300), "more than 1.80e308x faster");
        assert_eq!(ratio_words(1e-300, 1e300), "more than 1.80e308x slower");
        assert_eq!(count(1, "record"), "1 record");
        assert_eq!(count(0, "record"), "0 records");
    }

    #[test]
    fn ratios_below_one_read_as_slower() {
        assert_eq!(ratio_words(1.23, 1.0), "1.23x faster");
        assert_eq!(ratio_words(1.0, 1.18), "1.18x slower");
        assert_eq!(ratio_words(1.0, 1.001), "as fast");
        assert_eq!(ratio_words(0.0, 1.0), "not comparable");
    }

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(Level::parse("DEBUG"), Some(Level::Debug));
        assert_eq!(Level::parse(" warn "), Some(Level::Warn));
        assert_eq!(Level::parse("off"), Some(Level::Off));
        assert_eq!(Level::parse("verbose"), None);
        assert!(Level::Debug > Level::Info && Level::Info > Level::Warn);
        assert!(Level::Warn > Level::Error && Level::Error > Level::Off);
    }

    #[test]
    fn once_is_once_per_key() {
        let key = format!("diag-test-{}", std::process::id());
        assert!(once(&key));
        assert!(!once(&key));
        assert!(once(&format!("{key}-other")));
    }

    #[test]
    fn messages_show_control_characters_as_escapes() {
        assert_eq!(
            printable("key `bl\u{0}ur`\tnext\nline"),
            "key `bl\\u{0}ur`\tnext\nline"
        );
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12 * 1024 * 1024), "12.0 MiB");
    }
}
