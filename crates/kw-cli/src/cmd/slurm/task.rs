//! `kw slurm task SHARED`: one array task. Its shard is `SLURM_ARRAY_TASK_ID` (or
//! `--task-id`); the number of shards is the manifest's, never `SLURM_ARRAY_TASK_COUNT`
//! (a resubmitted array of tasks 1 and 4 has 2 tasks, but the shards are still cut from the
//! manifest's count). It runs `kw tune` over its captures into its shard directory, on the
//! devices this process sees (Slurm sets `CUDA_VISIBLE_DEVICES` to the GPUs it gave the
//! task), and writes the completion marker only when `kw tune` succeeded for all of them.

use super::manifest::Manifest;
use super::shards::{shard_captures, Marker, ShardDir};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The results log argument for `captures`: `kw tune --log` takes a file for one capture
/// and a directory for several.
fn log_arg(shard: &ShardDir, captures: &[PathBuf]) -> PathBuf {
    match captures {
        [one] => shard.logs().join(format!(
            "{}.tune.jsonl",
            one.file_stem()
                .map_or("capture".into(), |s| s.to_string_lossy())
        )),
        _ => shard.logs(),
    }
}

/// The `kw tune` arguments of one array task: its captures, its shard's wisdom, logs and
/// state, `--resume` (a resubmitted task continues where the killed one stopped), every
/// device it sees (`--devices all`: the GPUs Slurm gave it) unless the options name a
/// device, the compile threads from `SLURM_CPUS_PER_TASK` unless given, then the manifest's
/// options. The one place a task's tuning command is made.
pub fn tune_command(
    manifest: &Manifest,
    shard: &ShardDir,
    captures: &[PathBuf],
    cpus: Option<usize>,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["tune".into()];
    a.extend(captures.iter().map(|c| c.as_os_str().to_owned()));
    a.push("--wisdom-dir".into());
    a.push(shard.wisdom().into());
    a.push("--log".into());
    a.push(log_arg(shard, captures).into());
    a.push("--state-dir".into());
    a.push(shard.state().into());
    a.push("--resume".into());
    let names_device = manifest.tune_args.iter().any(|w| {
        ["--device", "--devices"]
            .iter()
            .any(|o| w == o || w.starts_with(&format!("{o}=")))
    });
    if !names_device {
        a.push("--devices".into());
        a.push("all".into());
    }
    let gives_threads = manifest
        .tune_args
        .iter()
        .any(|w| w == "--compile-threads" || w.starts_with("--compile-threads="));
    if let (Some(n), false) = (cpus, gives_threads) {
        // One CPU stays for the measuring process, as kw tune's own default does.
        a.push(format!("--compile-threads={}", n.saturating_sub(1).max(1)).into());
    }
    a.extend(manifest.tune_args.iter().map(OsString::from));
    a
}

/// The task id: `--task-id`, else `SLURM_ARRAY_TASK_ID`; checked against the manifest.
fn task_id(given: Option<usize>, manifest: &Manifest, shared: &Path) -> Result<usize> {
    let id = match given {
        Some(id) => id,
        None => {
            let text = std::env::var("SLURM_ARRAY_TASK_ID").context(
                "SLURM_ARRAY_TASK_ID is not set: `kw slurm task` runs as a task of the job \
                 array `kw slurm` wrote (or pass --task-id)",
            )?;
            text.trim()
                .parse()
                .with_context(|| format!("SLURM_ARRAY_TASK_ID={text:?} is not a task number"))?
        }
    };
    if id >= manifest.tasks {
        bail!(
            "task {id} does not exist: {} has {} tasks (0 to {})",
            Manifest::path(shared).display(),
            manifest.tasks,
            manifest.tasks - 1
        );
    }
    Ok(id)
}

/// Runs one array task; an error (or `kw tune`'s failure) leaves no marker.
pub fn run(shared: &Path, given: Option<usize>) -> Result<()> {
    let manifest = Manifest::load(shared)?;
    let task = task_id(given, &manifest, shared)?;
    let shard = ShardDir::new(shared, task);
    let captures = shard_captures(&manifest.captures, manifest.tasks, task);
    let modes = kw_core::files::FileModes::get();
    for d in [shard.wisdom(), shard.logs(), shard.state()] {
        modes
            .create_dir_all(&d)
            .with_context(|| format!("creating {}", d.display()))?;
    }
    // A marker of an earlier attempt says nothing about this one until it ends.
    match std::fs::remove_file(shard.marker()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", shard.marker().display())),
    }
    let cpus = std::env::var("SLURM_CPUS_PER_TASK")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    let args = tune_command(&manifest, &shard, &captures, cpus);
    let kw = std::env::current_exe().context("finding the kw binary")?;
    eprintln!(
        "kw slurm task {task} of {} on {}: {} capture(s), devices visible: {}",
        manifest.tasks,
        kw_core::host::host_name(),
        captures.len(),
        std::env::var("CUDA_VISIBLE_DEVICES")
            .unwrap_or_else(|_| "all (CUDA_VISIBLE_DEVICES unset)".into())
    );
    let mut cmd = std::process::Command::new(&kw);
    cmd.args(&args);
    kw_core::child_env::restore_icd_env(&mut cmd);
    let status = cmd
        .status()
        .with_context(|| format!("running {}", kw.display()))?;
    if !status.success() {
        bail!(
            "task {task}: kw tune failed ({status}); no completion marker written, so the \
             merge reports this shard; `kw slurm --resubmit-missing {}` runs it again (it \
             resumes from its results logs)",
            shared.display()
        );
    }
    Marker::new(&manifest, task, captures.clone()).save(&shard)?;
    eprintln!(
        "kw slurm task {task}: done, {} capture(s) tuned; marker {}",
        captures.len(),
        shard.marker().display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::manifest::sample;
    use super::*;

    fn words(a: &[OsString]) -> Vec<String> {
        a.iter().map(|w| w.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn a_task_tunes_its_shard_into_its_own_directory() {
        let m = sample(2, &["/c/a.kwcap", "/c/b.kwcap", "/c/c.kwcap"]);
        let shard = ShardDir::new(Path::new("/s"), 0);
        let caps = shard_captures(&m.captures, m.tasks, 0);
        assert_eq!(
            words(&tune_command(&m, &shard, &caps, Some(8))),
            [
                "tune",
                "/c/a.kwcap",
                "/c/c.kwcap",
                "--wisdom-dir",
                "/s/shards/0/wisdom",
                "--log",
                "/s/shards/0/logs",
                "--state-dir",
                "/s/shards/0/state",
                "--resume",
                "--devices",
                "all",
                "--compile-threads=7",
                "--strategy",
                "exhaustive"
            ]
        );
        // One capture: the log is a file; the user's --compile-threads wins.
        let mut m1 = m.clone();
        m1.tune_args.push("--compile-threads=2".into());
        let shard1 = ShardDir::new(Path::new("/s"), 1);
        let caps1 = shard_captures(&m1.captures, m1.tasks, 1);
        let w = words(&tune_command(&m1, &shard1, &caps1, Some(8)));
        assert_eq!(w[4], "--log");
        assert_eq!(w[5], "/s/shards/1/logs/b.tune.jsonl");
        assert_eq!(
            w.iter()
                .filter(|x| x.starts_with("--compile-threads"))
                .count(),
            1
        );
        // Options that name a device: no --devices all beside them.
        let mut m2 = m.clone();
        m2.tune_args
            .extend(["--device".to_string(), "1".to_string()]);
        let w = words(&tune_command(&m2, &shard, &caps, None));
        assert!(!w.iter().any(|x| x == "--devices"), "{w:?}");
    }

    #[test]
    fn the_shard_comes_from_the_task_id_and_the_count_from_the_manifest() {
        let m = sample(5, &["/a", "/b", "/c", "/d", "/e"]);
        assert_eq!(task_id(Some(4), &m, Path::new("/s")).unwrap(), 4);
        let e = task_id(Some(5), &m, Path::new("/s"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("task 5 does not exist") && e.contains("5 tasks"),
            "{e}"
        );
    }
}
