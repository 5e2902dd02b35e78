//! `kw tune` and the on-disk compile cache, through the binary on PoCL: re-tuning the same
//! capture with a warm cache compiles nothing (every configuration is a cache hit); with
//! `KW_CACHE=off` every configuration is compiled. The summary's `time:` line says so.
//! Each run uses a cache directory of its own under a temporary directory.

use std::path::Path;

fn kw(dir: &Path, cache: &Path, off: bool, args: &[&str]) -> String {
    let mut cmd = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"));
    cmd.current_dir(dir)
        .args(args)
        .env("KW_CACHE_DIR", cache)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"));
    if off {
        cmd.env("KW_CACHE", "off");
    } else {
        cmd.env_remove("KW_CACHE");
    }
    let out = cmd.output().expect("running kw");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kw {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `(compiles, cache hits)` from the summary's `time:` line.
fn counts(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("time: compile"))
        .unwrap_or_else(|| panic!("no time line in:\n{stdout}"));
    let tail = line.rsplit(';').next().unwrap();
    let num = |what: &str, back: usize| -> u64 {
        let words: Vec<&str> = tail.split_whitespace().collect();
        let i = words
            .iter()
            .position(|w| w.trim_end_matches(',') == what)
            .unwrap_or_else(|| panic!("no `{what}` in `{line}`"));
        words[i - back]
            .parse()
            .unwrap_or_else(|_| panic!("no count before `{what}` in `{line}`"))
    };
    (num("compiles", 1), num("hits", 2))
}

#[test]
fn a_warm_cache_retune_compiles_nothing_and_off_compiles_everything() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kw-tune-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("cache");
    let common = [
        // The same configurations in every run: no prior (the first run's wisdom, this
        // device's, would add the neighbours of its best to the next).
        "--no-prior",
        "--strategy",
        "exhaustive",
        "--budget",
        "5",
        "--samples",
        "2",
    ];
    let with = |extra: &[&str], log: &str| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(common.iter().map(|s| s.to_string()));
        v.extend(["--log".to_string(), log.to_string()]);
        v
    };
    let args = with(&["tune", "--bundled", "vector_add:4096"], "cold.jsonl");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let cold = kw(&dir, &cache, false, &refs);
    let (c1, h1) = counts(&cold);
    // The default configuration was compiled when the bundled kernel was captured (in the
    // main process): its evaluation may already be a hit.
    assert!(
        c1 >= 4 && c1 + h1 >= 5,
        "a cold cache compiles the configurations:\n{cold}"
    );
    let capture = "captures/vector_add_4096.kwcap";
    let args = with(&["tune", capture], "warm.jsonl");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let warm = kw(&dir, &cache, false, &refs);
    let (c2, h2) = counts(&warm);
    assert_eq!(c2, 0, "a warm cache compiles nothing:\n{warm}");
    // Every configuration was verified. (Where: verification compares on the device or on
    // the host, whichever it timed faster once both ran, so on a loaded machine PoCL's
    // comparison kernel may lose to the host; the count is not this test's to fix.)
    let line = warm
        .lines()
        .find(|l| l.contains("runs on the device"))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "runs").unwrap();
    let (on_device, runs) = (words[at - 3].trim_start_matches('('), words[at - 1]);
    let (on_device, runs) = (
        on_device.parse::<u64>().unwrap(),
        runs.parse::<u64>().unwrap(),
    );
    assert!(runs >= 5 && on_device <= runs, "{line}");
    assert_eq!(
        h2,
        c1 + h1,
        "every compile of the cold run is a hit now:\n{warm}"
    );
    // Every entry damaged (truncated): recompiled, replaced, and said so.
    let mut damaged = 0;
    for e in std::fs::read_dir(&cache).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "kwc") {
            let bytes = std::fs::read(e.path()).unwrap();
            std::fs::write(e.path(), &bytes[..bytes.len() / 2]).unwrap();
            damaged += 1;
        }
    }
    let args = with(&["tune", capture], "damaged.jsonl");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let again = kw(&dir, &cache, false, &refs);
    let (c4, h4) = counts(&again);
    assert_eq!(
        (c4, h4),
        (c1 + h1, 0),
        "damaged entries are not trusted:\n{again}"
    );
    assert!(
        again.contains(&format!(
            "({damaged} damaged or refused cache entries recompiled"
        )),
        "{damaged} entries damaged:\n{again}"
    );
    let args = with(&["tune", capture], "off.jsonl");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let off = kw(&dir, &cache, true, &refs);
    let (c3, h3) = counts(&off);
    assert_eq!(
        (c3, h3),
        (c1 + h1, 0),
        "KW_CACHE=off compiles every time:\n{off}"
    );
    // The cache commands see the entries.
    let stats = kw(&dir, &cache, false, &["cache", "stats"]);
    assert!(
        stats.contains("unusable entries (corrupt, truncated, foreign): 0"),
        "{stats}"
    );
    let ls = kw(&dir, &cache, false, &["cache", "ls"]);
    assert!(ls.contains("vector_add"), "{ls}");
    let cleared = kw(&dir, &cache, false, &["cache", "clear"]);
    assert!(cleared.starts_with("removed "), "{cleared}");
    let ls = kw(&dir, &cache, false, &["cache", "ls"]);
    assert!(ls.contains(": 0 entries"), "{ls}");
    // A file where a cache directory should be: said so, not "File exists".
    let file = dir.join("not-a-cache");
    std::fs::write(&file, b"x").unwrap();
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(["cache", "clear", "--dir"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    assert!(file.exists(), "the file is left alone");
    let _ = std::fs::remove_dir_all(&dir);
}
