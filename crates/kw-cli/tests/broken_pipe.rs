//! `kw ... | head -1`: a command whose reader has gone away ends quietly (status 0 or the
//! SIGPIPE-style 141), never with a panic. The reading end of the pipe is closed before `kw`
//! starts, so its first write fails: deterministic, no timing involved.

use kw_capture::{write_capture, CaptureBuffer};
use std::path::Path;
use std::process::Stdio;

/// Runs `kw args` with stdout (or stderr) a pipe nobody reads; returns its status and stderr.
fn run_into_closed_pipe(args: &[&str], pipe_stderr: bool) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"));
    cmd.args(args).stdin(Stdio::null());
    if pipe_stderr {
        cmd.stderr(writer).stdout(Stdio::null());
    } else {
        cmd.stdout(writer).stderr(Stdio::piped());
    }
    let out = cmd.output().expect("running kw");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(args: &[&str], status: std::process::ExitStatus, stderr: &str) {
    #[cfg(unix)]
    let by_sigpipe = std::os::unix::process::ExitStatusExt::signal(&status) == Some(13);
    #[cfg(not(unix))]
    let by_sigpipe = false;
    assert!(
        status.success() || status.code() == Some(141) || by_sigpipe,
        "kw {args:?} into a closed pipe: {status}\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "kw {args:?}: {stderr}"
    );
}

fn write_test_capture(dir: &Path) -> String {
    let meta = serde_json::json!({
        "tuning_key": "vector_add_f32",
        "kernel": {"name": "vector_add"},
        "problem_size": [1000, 1, 1],
        "device": {"name": "Test GPU", "backend": "opencl"},
        "args": [{"name": "c", "kind": "buffer", "bytes": 4000}, {"name": "n", "value": 1000}],
    });
    let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let p = write_capture(
        dir,
        "vector_add_f32_1000",
        &meta,
        vec![CaptureBuffer::new("c", "f32", data)],
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn printing_commands_end_quietly_when_the_reader_goes_away() {
    let dir = std::env::temp_dir().join(format!("kw-cli-broken-pipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = write_test_capture(&dir);
    let d = dir.to_str().unwrap();
    // The file really is readable: the same command into a pipe that is read succeeds.
    let ok = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(["capture", "show", &file])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    assert!(String::from_utf8_lossy(&ok.stdout).contains("vector_add_f32"));

    let commands: [&[&str]; 5] = [
        &["capture", "show", &file],
        &["capture", "show", "--json", &file],
        &["capture", "ls", d],
        &["capture", "verify", &file],
        &["--help"],
    ];
    for args in commands {
        let (status, stderr) = run_into_closed_pipe(args, false);
        assert_quiet(args, status, &stderr);
    }
    // Errors go to stderr: a closed stderr ends quietly too.
    let missing = dir.join("missing.kwcap");
    let args: &[&str] = &["capture", "show", missing.to_str().unwrap()];
    let (status, stderr) = run_into_closed_pipe(args, true);
    assert!(
        status.code() == Some(141),
        "kw {args:?} with stderr closed: {status}"
    );
    assert!(stderr.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
