//! Defaults that leave no litter (PoCL): without `--wisdom-dir` and `--log`, `kw tune`
//! writes its wisdom to the per-user wisdom directory (`KW_USER_WISDOM_DIR`), which selection
//! reads without being told, and its results log to the state directory's `logs/`
//! (`KW_STATE_DIR`); the current directory stays empty. A `KW_WISDOM_PATH` entry that does
//! not exist is said in one line.

mod common;

use std::path::Path;
use std::process::Output;

fn kw(cwd: &Path, root: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(cwd)
        .env("KW_USER_WISDOM_DIR", root.join("user-wisdom"))
        .env("KW_STATE_DIR", root.join("state"))
        .env_remove("KW_WISDOM_PATH")
        .args(args)
        .output()
        .expect("running kw")
}

fn ok(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn tune_writes_to_the_user_and_state_directories_not_the_current_one() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let root = common::unique_dir("tune-defaults");
    let (setup, work) = (root.join("setup"), root.join("work"));
    std::fs::create_dir_all(&setup).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // A capture, made elsewhere.
    ok(&kw(
        &setup,
        &root,
        &[
            "tune",
            "--bundled",
            "vector_add:4096",
            "--budget",
            "1",
            "--wisdom-dir",
            "w",
            "--log",
            "l.jsonl",
        ],
    ));
    let capture = setup.join("captures/vector_add_4096.kwcap");
    let text = ok(&kw(
        &work,
        &root,
        &[
            "tune",
            capture.to_str().unwrap(),
            "--budget",
            "3",
            "--samples",
            "1",
            "--confirm-rounds",
            "0",
        ],
    ));
    let left: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "kw tune left {left:?} in the current directory:\n{text}"
    );
    let wisdom = root.join("user-wisdom/vector_add.json");
    assert!(wisdom.is_file(), "{text}");
    assert!(text.contains(&wisdom.display().to_string()), "{text}");
    assert!(
        root.join("state/logs/vector_add_4096.tune.jsonl").is_file(),
        "{text}"
    );
    // Selection reads the per-user directory without --dir or KW_WISDOM_PATH.
    let explain = [
        "wisdom",
        "explain",
        "vector_add",
        "--device",
        "0",
        "--problem-size",
        "4096",
    ];
    let explained = ok(&kw(&work, &root, &explain));
    assert!(
        explained.contains(&wisdom.display().to_string()),
        "{explained}"
    );
    // A KW_WISDOM_PATH entry that does not exist: one line that says so.
    let missing = root.join("no-such-dir");
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(&work)
        .env("KW_USER_WISDOM_DIR", root.join("user-wisdom"))
        .env("KW_WISDOM_PATH", &missing)
        .args(explain)
        .output()
        .unwrap();
    let text = ok(&out);
    let said = format!(
        "KW_WISDOM_PATH names {}, which does not exist",
        missing.display()
    );
    assert_eq!(text.matches(&said).count(), 1, "{text}");
    // A wisdom file the run could not rewrite (a record invalid, here a negative time) is
    // found before the search, not after it: nothing is evaluated.
    let text = std::fs::read_to_string(&wisdom).unwrap();
    let broken = text.replacen("\"median_ms\": ", "\"median_ms\": -", 1);
    assert_ne!(broken, text);
    std::fs::write(&wisdom, broken).unwrap();
    let out = kw(
        &work,
        &root,
        &["tune", capture.to_str().unwrap(), "--budget", "3"],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("not rewriting a wisdom file with invalid records")
            && !said.contains("evaluations"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
