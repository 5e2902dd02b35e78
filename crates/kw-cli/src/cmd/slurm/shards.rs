//! Shards: which captures an array task tunes, where it writes, the completion marker it
//! writes last, and what the merge makes of a shard directory (complete, missing or
//! incomplete, with the reason).
//!
//! Layout of the shared directory (`kw slurm --out SHARED`):
//! `SHARED/shards/<task>/wisdom/` (the task's wisdom), `.../logs/` (its results logs),
//! `.../state/`, and `.../done.json`, the marker, written atomically when every capture of
//! the shard was tuned; nothing else ever says that a shard is complete.

use super::manifest::Manifest;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` field of a completion marker.
const MARKER_FORMAT: &str = "kernel-wisdom slurm shard";
/// The version of the completion marker this `kw` writes.
const MARKER_VERSION: u32 = 1;
/// The most of a marker that is read.
const MAX_MARKER_BYTES: u64 = 64 << 20;

/// The captures of shard `task` out of `tasks`: capture `j` (in the manifest's sorted order)
/// belongs to shard `j mod tasks`. Every capture is in exactly one shard and shard sizes
/// differ by at most one.
pub fn shard_captures(captures: &[PathBuf], tasks: usize, task: usize) -> Vec<PathBuf> {
    captures
        .iter()
        .enumerate()
        .filter(|(j, _)| tasks > 0 && j % tasks == task)
        .map(|(_, c)| c.clone())
        .collect()
}

/// The directories of one shard.
#[derive(Clone, Debug)]
pub struct ShardDir {
    /// `SHARED/shards/<task>`.
    pub root: PathBuf,
}

impl ShardDir {
    /// Shard `task` of the shared directory `shared`.
    pub fn new(shared: &Path, task: usize) -> ShardDir {
        ShardDir {
            root: shared.join("shards").join(task.to_string()),
        }
    }
    /// Where the task's `kw tune` writes wisdom.
    pub fn wisdom(&self) -> PathBuf {
        self.root.join("wisdom")
    }
    /// Where the task's results logs go.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// The task's state directory.
    pub fn state(&self) -> PathBuf {
        self.root.join("state")
    }
    /// The completion marker.
    pub fn marker(&self) -> PathBuf {
        self.root.join("done.json")
    }
}

/// `done.json`: written last by a task whose `kw tune` ended successfully.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// [`MARKER_FORMAT`].
    pub format: String,
    /// [`MARKER_VERSION`].
    pub version: u32,
    /// The manifest this shard was tuned for ([`Manifest::id`]).
    pub manifest: String,
    /// The task.
    pub task: usize,
    /// The captures tuned to the end.
    pub captures: Vec<PathBuf>,
    /// When the task finished (RFC 3339, UTC).
    pub finished: String,
    /// The node it ran on.
    pub host: String,
    /// The Slurm job (`SLURM_JOB_ID`), when it ran under Slurm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl Marker {
    /// The marker of `task` having tuned `captures` for `manifest`.
    pub fn new(manifest: &Manifest, task: usize, captures: Vec<PathBuf>) -> Marker {
        Marker {
            format: MARKER_FORMAT.into(),
            version: MARKER_VERSION,
            manifest: manifest.id(),
            task,
            captures,
            finished: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            host: kw_core::host::host_name().to_string(),
            job: std::env::var("SLURM_JOB_ID").ok(),
        }
    }

    /// Writes the marker of `shard` atomically.
    pub fn save(&self, shard: &ShardDir) -> Result<()> {
        let path = shard.marker();
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        kw_core::files::write_atomic(&path, text.as_bytes(), kw_core::files::FileModes::get())
            .with_context(|| format!("{}: cannot write the completion marker", path.display()))
    }
}

/// What the merge finds in one shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardState {
    /// Every capture of the shard was tuned: its wisdom is merged.
    Complete,
    /// The task did not finish (or never ran): the reason.
    Missing(String),
    /// A marker exists but does not vouch for this shard as the manifest cuts it now.
    Incomplete(String),
}

impl ShardState {
    /// True for [`ShardState::Complete`].
    pub fn is_complete(&self) -> bool {
        matches!(self, ShardState::Complete)
    }
}

/// The state of shard `task` of `manifest` in the shared directory `shared`.
pub fn shard_state(shared: &Path, manifest: &Manifest, task: usize) -> ShardState {
    let shard = ShardDir::new(shared, task);
    let path = shard.marker();
    let rules = kw_core::files::ReadRules::new("completion marker", MAX_MARKER_BYTES).private();
    let text = match kw_core::files::read_to_string(&path, rules) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => {
            let started = shard.logs().is_dir();
            return ShardState::Missing(format!(
                "no completion marker {} ({})",
                path.display(),
                if started {
                    "the task started but did not finish: it failed, was cancelled or ran \
                     out of time"
                } else {
                    "the task never started"
                }
            ));
        }
        Err(e) => return ShardState::Incomplete(format!("unreadable completion marker: {e}")),
    };
    let marker: Marker = match serde_json::from_str(&text) {
        Ok(m) => m,
        Err(e) => {
            return ShardState::Incomplete(format!(
                "{}: a damaged completion marker ({e})",
                path.display()
            ))
        }
    };
    if marker.format != MARKER_FORMAT || marker.version == 0 || marker.version > MARKER_VERSION {
        return ShardState::Incomplete(format!(
            "{}: not a completion marker this kw reads (format \"{}\", version {})",
            path.display(),
            marker.format,
            marker.version
        ));
    }
    if marker.manifest != manifest.id() {
        return ShardState::Incomplete(format!(
            "{}: left by an earlier run in this directory (manifest {}, now {})",
            path.display(),
            marker.manifest,
            manifest.id()
        ));
    }
    if marker.task != task {
        return ShardState::Incomplete(format!(
            "{}: written for task {}, not {task}",
            path.display(),
            marker.task
        ));
    }
    let want = shard_captures(&manifest.captures, manifest.tasks, task);
    let lacking: Vec<String> = want
        .iter()
        .filter(|c| !marker.captures.contains(c))
        .map(|c| c.display().to_string())
        .collect();
    if !lacking.is_empty() {
        return ShardState::Incomplete(format!(
            "{}: lists {} of the shard's {} captures; not tuned: {}",
            path.display(),
            want.len() - lacking.len(),
            want.len(),
            lacking.join(", ")
        ));
    }
    match super::super::wisdom::wisdom_files_in(&shard.wisdom()) {
        Ok(files) if !files.is_empty() => ShardState::Complete,
        Ok(_) => ShardState::Incomplete(format!(
            "{}: no wisdom file, although the marker says the task finished",
            shard.wisdom().display()
        )),
        Err(e) => ShardState::Incomplete(format!("{e:#}")),
    }
}

/// The tasks whose shards are not complete, with their states, in task order.
pub fn unfinished(shared: &Path, manifest: &Manifest) -> Vec<(usize, ShardState)> {
    (0..manifest.tasks)
        .map(|t| (t, shard_state(shared, manifest, t)))
        .filter(|(_, s)| !s.is_complete())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::manifest::sample;
    use super::*;

    fn paths(n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| PathBuf::from(format!("/c/{i:02}.kwcap")))
            .collect()
    }

    #[test]
    fn every_capture_is_in_exactly_one_shard_and_shards_are_balanced() {
        for n in 1..12 {
            for tasks in 1..=n {
                let all = paths(n);
                let mut seen = Vec::new();
                let mut sizes = Vec::new();
                for t in 0..tasks {
                    let s = shard_captures(&all, tasks, t);
                    sizes.push(s.len());
                    seen.extend(s);
                }
                seen.sort();
                assert_eq!(seen, all, "n {n} tasks {tasks}");
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1 && *lo >= 1, "n {n} tasks {tasks}: {sizes:?}");
            }
        }
        // Round robin over the sorted list: 5 captures, 3 tasks.
        let s1: Vec<String> = shard_captures(&paths(5), 3, 1)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(s1, ["/c/01.kwcap", "/c/04.kwcap"]);
        assert!(shard_captures(&paths(5), 3, 3).is_empty());
    }

    fn shared_dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "kw-slurm-{test}-{}-{}",
            std::process::id(),
            kw_core::files::nonce(7)
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A shard made complete by hand: a real wisdom file (the shipped one of `key`) and its
    /// marker.
    fn complete(shared: &Path, m: &Manifest, task: usize, key: &str) {
        let shard = ShardDir::new(shared, task);
        std::fs::create_dir_all(shard.wisdom()).unwrap();
        std::fs::create_dir_all(shard.logs()).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../wisdom")
            .join(format!("{key}.json"));
        std::fs::copy(&shipped, shard.wisdom().join(format!("{key}.json"))).unwrap();
        let caps = shard_captures(&m.captures, m.tasks, task);
        Marker::new(m, task, caps).save(&shard).unwrap();
    }

    #[test]
    fn missing_and_incomplete_shards_are_named_with_their_reason() {
        let shared = shared_dir("states");
        let m = sample(
            4,
            &[
                "/c/a.kwcap",
                "/c/b.kwcap",
                "/c/c.kwcap",
                "/c/d.kwcap",
                "/c/e.kwcap",
            ],
        );
        complete(&shared, &m, 0, "kw_transpose");
        // Task 1 started (it has logs) but left no marker.
        std::fs::create_dir_all(ShardDir::new(&shared, 1).logs()).unwrap();
        // Task 2's marker lists fewer captures than its shard holds.
        complete(&shared, &m, 2, "kw_reduce_sum");
        let shard2 = ShardDir::new(&shared, 2);
        Marker::new(&m, 2, vec![]).save(&shard2).unwrap();
        // Task 3 never started.
        let states: Vec<(usize, ShardState)> =
            (0..4).map(|t| (t, shard_state(&shared, &m, t))).collect();
        assert_eq!(states[0].1, ShardState::Complete);
        match &states[1].1 {
            ShardState::Missing(r) => assert!(r.contains("started but did not finish"), "{r}"),
            s => panic!("task 1: {s:?}"),
        }
        match &states[2].1 {
            ShardState::Incomplete(r) => {
                assert!(
                    r.contains("lists 0 of the shard's 1 captures") && r.contains("/c/c.kwcap"),
                    "{r}"
                )
            }
            s => panic!("task 2: {s:?}"),
        }
        match &states[3].1 {
            ShardState::Missing(r) => assert!(r.contains("never started"), "{r}"),
            s => panic!("task 3: {s:?}"),
        }
        let left: Vec<usize> = unfinished(&shared, &m)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(left, [1, 2, 3]);
        // A marker of another manifest (an earlier run in the same directory) never counts.
        let mut other = m.clone();
        other.tune_args.push("--budget=5".into());
        match shard_state(&shared, &other, 0) {
            ShardState::Incomplete(r) => assert!(r.contains("earlier run"), "{r}"),
            s => panic!("{s:?}"),
        }
        // A damaged marker is incomplete, naming the file.
        std::fs::write(ShardDir::new(&shared, 0).marker(), "{").unwrap();
        match shard_state(&shared, &m, 0) {
            ShardState::Incomplete(r) => {
                assert!(r.contains("done.json") && r.contains("damaged"), "{r}")
            }
            s => panic!("{s:?}"),
        }
        std::fs::remove_dir_all(&shared).unwrap();
    }
}
