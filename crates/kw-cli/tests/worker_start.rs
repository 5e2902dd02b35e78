//! The evaluation worker's start-up, through the `kw` binary on PoCL: it replies `loading` once
//! the device is open and the capture's metadata read, takes prefetches while the capture
//! loads, and replies `ready` (with its start-up time) before the first result. A capture whose
//! buffer data is damaged but whose metadata reads fine fails to load after `loading`: the
//! worker replies `start_failed`, and `kw tune` stops with a start failure naming the damage,
//! never a failed result of a configuration.

mod common;

use kw_capture::Capture;
use kw_core::space::{Point, TuningSpace};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// A directory with a vector_add capture made on the first OpenCL device, the device's
/// index and the kernel's tuning space there.
fn setup(name: &str) -> Option<(PathBuf, PathBuf, String, TuningSpace)> {
    let (dir, capture, index, device) =
        common::vector_add_capture(&format!("worker-start-{name}"), 1 << 16)?;
    let (_, space) = kw_replay::ReplaySession::inspect(&capture, device.info()).unwrap();
    Some((dir, capture, index, space))
}

/// Damages one byte of compressed buffer data: the header (metadata, buffer and frame
/// tables) still reads and checks fine; reading that buffer fails its chunk checksum.
fn damage_buffer_data(capture: &Path) {
    let chunk = {
        let c = Capture::open(capture).unwrap();
        c.header().frames[0].chunks[0].clone()
    };
    let mut bytes = std::fs::read(capture).unwrap();
    let at = (chunk.offset + chunk.compressed_len / 2) as usize;
    bytes[at] ^= 0x5a;
    std::fs::write(capture, bytes).unwrap();
    Capture::open(capture).expect("the metadata still reads");
}

/// A worker process and its reply lines.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<String>,
}

impl Worker {
    fn start(capture: &Path, device: &str) -> Worker {
        let mut child = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
            .arg("__eval-worker")
            .args(["--capture", capture.to_str().unwrap(), "--device", device])
            .args(["--warmup", "0", "--min-samples", "1", "--max-samples", "2"])
            .args([
                "--sample-time-ms",
                "10",
                "--rtol",
                "0.0001",
                "--atol",
                "0.000001",
            ])
            .args(["--compile-threads", "2", "--verify"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting kw __eval-worker");
        let stdout = child.stdout.take().unwrap();
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(json) = line.strip_prefix("@kw-worker ") {
                    if tx.send(json.to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Worker {
            stdin: child.stdin.take(),
            child,
            replies,
        }
    }

    fn send(&mut self, request: serde_json::Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    }

    fn prefetch(&mut self, points: &[Point]) {
        self.send(serde_json::json!({"op": "prefetch", "points": points}));
    }

    fn evaluate(&mut self, point: &Point) {
        self.send(serde_json::json!({"op": "evaluate", "point": point}));
    }

    /// The next reply, or None when the worker closed its stdout.
    fn reply(&self) -> Option<serde_json::Value> {
        let line = self.replies.recv_timeout(Duration::from_secs(120)).ok()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Closes its stdin and waits for it to exit.
    fn finish(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        self.child.wait().unwrap()
    }
}

fn kind(reply: &serde_json::Value) -> &str {
    reply["reply"].as_str().unwrap_or("?")
}

#[test]
fn prefetches_compile_while_the_capture_loads_and_ready_comes_before_the_first_result() {
    let Some((_dir, capture, idx, space)) = setup("good") else {
        return;
    };
    let mut w = Worker::start(&capture, &idx);
    let first = w.reply().expect("a first reply");
    assert_eq!(kind(&first), "loading", "{first}");
    let points: Vec<Point> = space.iter().take(4).collect();
    let default = space.default_point();
    // Sent at once, whether or not the load has ended: the worker queues the evaluation.
    w.prefetch(&points);
    w.evaluate(&default);
    let ready = w.reply().expect("ready");
    assert_eq!(kind(&ready), "ready", "{ready}");
    let start_s = ready["start_s"].as_f64().unwrap();
    assert!(start_s > 0.0, "{ready}");
    // `compiled` before the result, and on OpenCL (`ready` says so) `launched` after the
    // first launch, where a driver may compile: `kw tune`'s time limits count from them.
    let compiled = w.reply().expect("compiled");
    assert_eq!(kind(&compiled), "compiled", "{compiled}");
    assert_eq!(ready["first_launch"], true, "an OpenCL capture: {ready}");
    let launched = w.reply().expect("launched");
    assert_eq!(kind(&launched), "launched", "{launched}");
    let result = w.reply().expect("the result");
    assert_eq!(kind(&result), "result", "{result}");
    assert!(result["objective"].as_f64().is_some(), "{result}");
    assert_eq!(
        result["stats"]["start_s"].as_f64(),
        Some(start_s),
        "{result}"
    );
    // A prefetched configuration: compiled by the pool that started before the load.
    w.evaluate(&points[1]);
    assert_eq!(kind(&w.reply().expect("compiled")), "compiled");
    assert_eq!(kind(&w.reply().expect("launched")), "launched");
    let result = w.reply().expect("the second result");
    assert!(result["objective"].as_f64().is_some(), "{result}");
    let stats = &result["stats"];
    let compiled = stats["compiles"].as_u64().unwrap() + stats["cache_hits"].as_u64().unwrap();
    assert!(compiled >= 2, "both configurations compiled: {result}");
    // `evaluate_any` takes one compiled ahead before one never prefetched, and says which.
    let fresh = space
        .iter()
        .find(|p| !points.contains(p) && *p != default)
        .expect("a configuration not prefetched");
    w.send(serde_json::json!({"op": "evaluate_any", "points": [fresh, points[2]]}));
    let compiled = w.reply().expect("compiled");
    assert_eq!(kind(&compiled), "compiled", "{compiled}");
    assert_eq!(compiled["index"], 1, "{compiled}");
    assert_eq!(kind(&w.reply().expect("launched")), "launched");
    let result = w.reply().expect("the third result");
    assert!(result["objective"].as_f64().is_some(), "{result}");
    assert!(w.finish().success());
}

#[test]
fn a_capture_that_fails_to_load_after_loading_is_a_start_failure() {
    let Some((dir, capture, idx, space)) = setup("damaged") else {
        return;
    };
    damage_buffer_data(&capture);

    // The worker: `loading` (the metadata is fine), then `start_failed`, and no result.
    let mut w = Worker::start(&capture, &idx);
    let first = w.reply().expect("a first reply");
    assert_eq!(kind(&first), "loading", "{first}");
    w.prefetch(&[space.default_point()]);
    w.evaluate(&space.default_point());
    let failed = w.reply().expect("start_failed");
    assert_eq!(kind(&failed), "start_failed", "{failed}");
    let reason = failed["reason"].as_str().unwrap();
    assert!(
        reason.contains("checksum mismatch") && reason.contains(capture.to_str().unwrap()),
        "{reason}"
    );
    assert!(w.reply().is_none(), "nothing after start_failed");
    assert!(w.finish().success());

    // `kw tune`: the run stops with the start failure; no configuration is blamed.
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(&dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(["tune", capture.to_str().unwrap(), "--device", &idx])
        .args(["--budget", "4", "--samples", "2", "--log", "run.jsonl"])
        .output()
        .unwrap();
    let all = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("checksum mismatch"), "{all}");
    assert!(!all.contains("crashed"), "{all}");
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap_or_default();
    assert!(
        log.lines().count() <= 1,
        "no configuration has a result: {log}"
    );
    assert!(!dir.join("wisdom/vector_add.json").exists(), "{all}");
}
