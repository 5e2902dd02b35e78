//! Environment values the library cannot parse are warned about once, naming the variable,
//! the value and what is used instead (issue 28): a child process of this test binary reads
//! them through the same entry points an application does.

use std::process::Command;

const CHILD: &str = "KW_ENV_WARNINGS_CHILD";

/// In a child: the file modes, read twice (a warning is said once), are the private ones.
fn file_modes_read_twice_are_private() {
    assert_eq!(
        kw_core::files::FileModes::get(),
        kw_core::files::FileModes::PRIVATE
    );
    let _ = kw_core::files::FileModes::get();
}

/// Runs `test` of this binary in a child process with `marker` set, `KW_LOG=warn` and
/// `vars`; asserts that it passed and returns its standard error.
fn child(test: &str, marker: &str, vars: &[(&str, &std::ffi::OsStr)]) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(marker, "1")
        .env("KW_LOG", "warn")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

#[test]
fn invalid_settings_are_warned_about_once() {
    if std::env::var_os(CHILD).is_some() {
        // The child: what an application's first compile and first file write do.
        let cache = kw_core::compile_cache::CompileCache::global();
        let _ = kw_core::compile_cache::CompileCache::global();
        assert_eq!(cache.max_bytes(), kw_core::compile_cache::DEFAULT_MAX_BYTES);
        file_modes_read_twice_are_private();
        return;
    }
    let err = child(
        "invalid_settings_are_warned_about_once",
        CHILD,
        &[
            ("KW_CACHE", "sometimes".as_ref()),
            ("KW_CACHE_MAX_BYTES", "0".as_ref()),
            ("KW_FILE_MODE", "777".as_ref()),
        ],
    );
    for (var, used) in [
        ("KW_CACHE=\"sometimes\"", "the cache stays on"),
        ("KW_CACHE_MAX_BYTES=\"0\"", "using 1073741824"),
        ("KW_FILE_MODE=\"777\"", "using private"),
    ] {
        assert_eq!(err.matches(var).count(), 1, "{var} once in: {err}");
        let line = err.lines().find(|l| l.contains(var)).unwrap();
        assert!(line.contains(used), "{line}");
        assert!(line.starts_with("kernel-wisdom: "), "{line}");
    }
}

/// A setting that is not UTF-8 text is said once, not ignored silently.
#[cfg(unix)]
#[test]
fn settings_that_are_not_text_are_warned_about_once() {
    use std::os::unix::ffi::OsStrExt;
    const NOT_TEXT_CHILD: &str = "KW_ENV_NOT_TEXT_CHILD";
    if std::env::var_os(NOT_TEXT_CHILD).is_some() {
        file_modes_read_twice_are_private();
        return;
    }
    let err = child(
        "settings_that_are_not_text_are_warned_about_once",
        NOT_TEXT_CHILD,
        &[("KW_FILE_MODE", std::ffi::OsStr::from_bytes(b"gr\xffoup"))],
    );
    assert_eq!(err.matches("KW_FILE_MODE=").count(), 1, "{err}");
    assert!(err.contains("is not valid UTF-8 text"), "{err}");
}
