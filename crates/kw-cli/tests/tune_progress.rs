//! `kw tune`'s progress where standard error is not a terminal (PoCL): plain lines
//! (evaluations, failures, best so far, time left), one per evaluation with
//! `KW_PROGRESS_INTERVAL=0`, only the first with a long interval.

mod common;

fn tune(dir: &std::path::Path, interval: &str, log: &str) -> String {
    let out = common::kw_in(dir)
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
    let dir = common::unique_dir("tune-progress");
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
