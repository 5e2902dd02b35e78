//! `kw slurm` without a Slurm (the real one is `tools/slurm-check.sh`): the files it writes,
//! its refusals, the array tasks run by hand (`kw slurm task`, as the array script runs it)
//! on PoCL captures, the merge naming the shards that are missing and failing until every
//! shard is in, and the submissions `--submit` and `--resubmit-missing` make (through
//! `KW_SBATCH`, a script that records its arguments as `sbatch` would receive them).

mod common;

use kernel_wisdom::{open_device, DeviceSelector};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Three vector_add captures (sizes 1024, 2048, 4096) on the first OpenCL device in
/// `dir/captures`; `None` without an OpenCL device.
fn captures(dir: &Path) -> Option<PathBuf> {
    let index = common::opencl_index()?;
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let out = dir.join("captures");
    std::fs::create_dir_all(&out).unwrap();
    for n in [1024usize, 2048, 4096] {
        common::capture_vector_add(&out, &format!("va{n}"), n, device.as_ref());
    }
    Some(out)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A stand-in for `sbatch` that appends its arguments to `calls` and answers job ids 100,
/// 101, ... as `sbatch --parsable` does (or fails, saying why, when `fail` is set).
fn fake_sbatch(dir: &Path, fail: bool) -> (PathBuf, PathBuf) {
    let calls = dir.join(if fail { "calls-fail" } else { "calls" });
    let script = dir.join(if fail { "sbatch-fail" } else { "sbatch" });
    let body = if fail {
        "echo 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n".to_string()
    } else {
        format!(
            "echo \"$*\" >> '{c}'\necho $((99 + $(wc -l < '{c}')))\n",
            c = calls.display()
        )
    };
    std::fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, calls)
}

#[test]
fn shards_run_by_hand_merge_and_name_what_is_missing() {
    let dir = common::unique_dir("slurm-cli");
    let Some(caps) = captures(&dir) else { return };
    let shared = dir.join("shared");
    let (sbatch, calls) = fake_sbatch(&dir, false);
    // Refusals first: more tasks than captures, options a task sets itself, bad kw tune
    // options, a time Slurm would not take.
    let base = |extra: &[&str]| {
        let mut c = common::kw_in(&dir);
        c.args([
            "slurm",
            caps.to_str().unwrap(),
            "--out",
            shared.to_str().unwrap(),
        ])
        .args(extra);
        c.env("KW_SBATCH", &sbatch);
        c
    };
    for (extra, says) in [
        (
            &["--tasks", "4"][..],
            "between 1 and the number of captures (3)",
        ),
        (
            &["--tasks", "2", "--", "--wisdom-dir", "x"][..],
            "`--wisdom-dir` cannot be passed on",
        ),
        (
            &["--tasks", "2", "--", "--budgett", "3"][..],
            "the kw tune options after `--`",
        ),
        (
            &["--tasks", "2", "--time", "2h"][..],
            "expected a Slurm time",
        ),
        (&["--tasks", "2", "--strategy", "nope"][..], "nope"),
        // Values kw tune refuses, found before anything is written.
        (&["--tasks", "2", "--", "--time", "xyz"][..], "xyz"),
        (&["--tasks", "2", "--", "--rtol", "-1"][..], "rtol"),
        (
            &["--tasks", "2", "--cpus-per-task", "0"][..],
            "--cpus-per-task",
        ),
    ] {
        let o = base(extra).output().unwrap();
        assert!(!o.status.success(), "{extra:?} was accepted");
        assert!(text(&o).contains(says), "{extra:?}: {}", text(&o));
    }
    assert!(!shared.join("kw-slurm.json").exists());
    // A folder that holds a `wisdom/` (or `shards/`) no kw slurm run made: refused, kept (a
    // later --force removed it as "the earlier run's").
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("wisdom")).unwrap();
    std::fs::write(project.join("wisdom/kw_gemm.json"), "{}").unwrap();
    let mut c = common::kw_in(&dir);
    c.args(["slurm", caps.to_str().unwrap(), "--tasks", "1", "--out"])
        .arg(&project);
    let o = c.output().unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("no kw slurm run made it"), "{}", text(&o));
    assert!(project.join("wisdom/kw_gemm.json").exists());
    assert!(!project.join("kw-slurm.json").exists());

    // The run: 3 captures in 2 shards, submitted (array, then the merge after any end).
    let o = base(&[
        "--tasks",
        "2",
        "--gpus-per-task",
        "0",
        "--partition",
        "debug",
        "--time",
        "5:00",
        "--sbatch-line",
        "--qos=low",
        "--strategy",
        "exhaustive",
        "--budget",
        "4",
        "--submit",
        "--",
        "--no-prior",
        "--confirm-rounds",
        "0",
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("submitted: array job 100, merge job 101"),
        "{}",
        text(&o)
    );
    let shared = std::path::absolute(&shared).unwrap();
    let array = shared.join("kw-slurm-array.sh");
    let merge = shared.join("kw-slurm-merge.sh");
    let sent = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(
        sent,
        format!(
            "--parsable {}\n--parsable --dependency=afterany:100 {}\n",
            array.display(),
            merge.display()
        )
    );
    let script = std::fs::read_to_string(&array).unwrap();
    for line in [
        "#SBATCH --array=0-1",
        "#SBATCH --partition=debug",
        "#SBATCH --time=5:00",
        "#SBATCH --qos=low",
    ] {
        assert!(script.contains(line), "{line} not in\n{script}");
    }
    assert!(!script.contains("--gres"), "{script}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shared.join("kw-slurm.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["tasks"], 2);
    assert_eq!(manifest["captures"].as_array().unwrap().len(), 3);
    // A second run into the same directory is refused without --force.
    let o = base(&["--tasks", "2"]).output().unwrap();
    assert!(
        !o.status.success() && text(&o).contains("holds an earlier run"),
        "{}",
        text(&o)
    );

    let merge_run = || {
        common::kw_in(&dir)
            .args(["slurm", "merge", shared.to_str().unwrap()])
            .output()
            .unwrap()
    };
    // Nothing ran yet: both shards missing, the merge fails.
    let o = merge_run();
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("shard 0 (array task 0) is missing")
            && t.contains("shard 1 (array task 1) is missing"),
        "{t}"
    );
    assert!(
        t.contains("never started") && t.contains("2 of 2 shard(s) missing"),
        "{t}"
    );

    // Task 0 by hand; task 1 as the array runs it (SLURM_ARRAY_TASK_ID; the count of the
    // array is not what cuts the shards: a resubmitted array has fewer tasks).
    let o = common::kw_in(&dir)
        .args(["slurm", "task", shared.to_str().unwrap(), "--task-id", "0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(shared.join("shards/0/done.json").is_file());
    let o = merge_run();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("shard 1 (array task 1) is missing") && !t.contains("shard 0 (array"),
        "{t}"
    );
    assert!(
        t.contains("va2048.kwcap"),
        "the missing shard's captures are named: {t}"
    );
    assert!(t.contains("1 of 2 shard(s) complete and merged"), "{t}");

    // --resubmit-missing submits task 1 only, and a merge after it.
    let o = common::kw_in(&dir)
        .args(["slurm", "--resubmit-missing", shared.to_str().unwrap()])
        .env("KW_SBATCH", &sbatch)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let sent = std::fs::read_to_string(&calls).unwrap();
    let last: Vec<&str> = sent.lines().skip(2).collect();
    assert_eq!(
        last,
        [
            format!("--parsable --array=1 {}", array.display()),
            format!("--parsable --dependency=afterany:102 {}", merge.display())
        ]
    );
    // A missing sbatch is said, with the command.
    let o = common::kw_in(&dir)
        .args(["slurm", "--resubmit-missing", shared.to_str().unwrap()])
        .env("KW_SBATCH", dir.join("no-such-sbatch"))
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("no-such-sbatch --parsable --array=1"),
        "{t}"
    );
    assert!(t.contains("not found"), "{t}");
    // A refused submission names the command and sbatch's reason.
    let (bad, _) = fake_sbatch(&dir, true);
    let o = common::kw_in(&dir)
        .args(["slurm", "--resubmit-missing", shared.to_str().unwrap()])
        .env("KW_SBATCH", &bad)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("--array=1") && t.contains("invalid partition specified"),
        "{t}"
    );

    let o = common::kw_in(&dir)
        .args(["slurm", "task", shared.to_str().unwrap()])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = merge_run();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("every shard is in"), "{}", text(&o));
    let merged = kw_core::wisdom::WisdomFile::load(&shared.join("wisdom/vector_add.json")).unwrap();
    let mut sizes: Vec<i64> = merged.records.iter().map(|r| r.problem_size[0]).collect();
    sizes.sort();
    assert_eq!(sizes, [1024, 2048, 4096]);
    // Nothing left to resubmit.
    let o = common::kw_in(&dir)
        .args(["slurm", "--resubmit-missing", shared.to_str().unwrap()])
        .env("KW_SBATCH", &bad)
        .output()
        .unwrap();
    assert!(
        o.status.success() && text(&o).contains("nothing to submit"),
        "{}",
        text(&o)
    );
    // A damaged wisdom file in one shard: that shard is named (and not merged), the merge
    // fails; it stopped the whole merge before, the other shards unmerged.
    let shard1 = shared.join("shards/1/wisdom/vector_add.json");
    let good = std::fs::read(&shard1).unwrap();
    std::fs::write(&shard1, "{broken").unwrap();
    std::fs::remove_dir_all(shared.join("wisdom")).unwrap();
    let o = merge_run();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("shard 1 (array task 1) is incomplete: its wisdom is damaged")
            && t.contains("1 of 2 shard(s) complete and merged"),
        "{t}"
    );
    assert!(
        shared.join("wisdom/vector_add.json").exists(),
        "shard 0 is merged"
    );
    std::fs::write(&shard1, good).unwrap();
    assert!(merge_run().status.success());
    // --force starts over: the earlier shards and merged wisdom go, and the merge finds none.
    let o = base(&["--tasks", "3", "--force"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("removed the earlier run's"),
        "{}",
        text(&o)
    );
    assert!(!shared.join("shards").exists() && !shared.join("wisdom").exists());
    let t = text(&merge_run());
    assert!(t.contains("3 of 3 shard(s) missing"), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Fuzz round of 2026-11-27: a shared directory with `%` (sbatch's file name patterns) or `\`
/// was taken, and created even when refused; a file that is no capture was taken, to fail
/// on the cluster after the queue; the printed submit commands were not quoted for the shell.
#[test]
fn paths_sbatch_misreads_and_non_captures_are_refused_before_anything_is_written() {
    let dir = common::unique_dir("slurm-cli-refusals");
    let Some(caps) = captures(&dir) else { return };
    let run = |inputs: &[&Path], out: &Path| {
        let mut c = common::kw_in(&dir);
        c.arg("slurm")
            .args(inputs)
            .args(["--tasks", "1", "--out"])
            .arg(out);
        c.output().unwrap()
    };
    for (name, says) in [
        ("pct%j", "`%`"),
        ("back\\slash", "`\\`"),
        ("has space", "white space"),
    ] {
        let out = dir.join(name);
        let o = run(&[&caps], &out);
        assert!(!o.status.success(), "{name}: {}", text(&o));
        assert!(text(&o).contains(says), "{name}: {}", text(&o));
        assert!(!out.exists(), "{name}: created though refused");
    }
    let not_a_capture = dir.join("log.kwcap");
    std::fs::write(&not_a_capture, b"{\"format\": \"kw-tune-log\"}\n").unwrap();
    let o = run(&[&not_a_capture], &dir.join("shared1"));
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("log.kwcap: not a capture kw slurm can tune"),
        "{}",
        text(&o)
    );
    assert!(!dir.join("shared1").join("kw-slurm.json").exists());
    // A path the shell would split: the submit commands printed are quoted.
    let out = dir.join("semi;colon");
    let o = run(&[&caps], &out);
    assert!(o.status.success(), "{}", text(&o));
    let quoted = format!("sbatch --parsable '{}/", out.display());
    assert!(text(&o).contains(&quoted), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
