//! `kw tune`'s progress where standard error is not a terminal (PoCL): plain lines
//! (evaluations, failures, best so far, time left), one per evaluation with
//! `KW_PROGRESS_INTERVAL=0`, only the first with a long interval.

use std::process::Command;

fn tune(dir: &std::path::Path, interval: &str, log: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .env("KW_PROGRESS_INTERVAL", interval)
        .args([
            "tune",
            "--bundled",
            "vector_add:4096",
            "--budget",
            "4",
            "--samples",
            "3",
            "--log",
            log,
            "--wisdom-dir",
            "wis",
            "--confirm-rounds",
            "0",
        ])
        .output()
        .expect("running kw");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn plain_progress_lines_when_not_a_terminal() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "kw-tune-progress-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let every = tune(&dir, "0", "a.jsonl");
    let lines: Vec<&str> = every
        .lines()
        .filter(|l| l.starts_with("kw tune: vector_add: ") && l.contains(" evaluations, "))
        .collect();
    assert_eq!(lines.len(), 4, "{every}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.contains(&format!(": {}/4 evaluations, failures 0, best ", i + 1)),
            "{l}"
        );
        assert!(l.contains(" ms, ") && l.ends_with(" left"), "{l}");
    }
    // A long interval: the first evaluation's line only.
    let sparse = tune(&dir, "3600", "b.jsonl");
    let n = sparse
        .lines()
        .filter(|l| l.contains(" evaluations, failures "))
        .count();
    assert_eq!(n, 1, "{sparse}");
    let _ = std::fs::remove_dir_all(&dir);
}
