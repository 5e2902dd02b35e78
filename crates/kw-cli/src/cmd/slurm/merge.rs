//! `kw slurm merge SHARED`: the merge job. Merges the wisdom of every complete shard into
//! `SHARED/wisdom/` (through `kw wisdom merge`), names every shard that is missing or
//! incomplete with its reason, and fails when there is one, so that the job's state says
//! whether the run is whole. Complete shards are merged either way: a merge after a
//! resubmission adds the rest.

use super::manifest::Manifest;
use super::script::SLURM_LOGS;
use super::shards::{shard_captures, shard_state, ShardDir, ShardState};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// Where the merged wisdom goes.
pub fn merged_dir(shared: &Path) -> PathBuf {
    shared.join("wisdom")
}

/// One line per shard that is not complete: task, state, reason, and its captures.
pub fn describe_unfinished(manifest: &Manifest, states: &[(usize, ShardState)]) -> Vec<String> {
    states
        .iter()
        .filter_map(|(task, state)| {
            let (what, why) = match state {
                ShardState::Complete => return None,
                ShardState::Missing(why) => ("missing", why),
                ShardState::Incomplete(why) => ("incomplete", why),
            };
            let caps: Vec<String> = shard_captures(&manifest.captures, manifest.tasks, *task)
                .iter()
                .map(|c| {
                    c.file_name()
                        .map_or_else(|| c.display().to_string(), |n| n.to_string_lossy().into())
                })
                .collect();
            Some(format!(
                "shard {task} (array task {task}) is {what}: {why}; its captures: {}",
                caps.join(", ")
            ))
        })
        .collect()
}

/// A complete shard whose wisdom does not load (a damaged file) is incomplete: it is not
/// merged, and is named with the others (one damaged file stopped the whole merge).
fn readable(shared: &Path, task: usize, state: ShardState) -> ShardState {
    if !state.is_complete() {
        return state;
    }
    let dir = ShardDir::new(shared, task).wisdom();
    let files = match super::super::wisdom::wisdom_files_in(&dir) {
        Ok(files) => files,
        Err(e) => return ShardState::Incomplete(format!("its wisdom cannot be listed: {e:#}")),
    };
    for f in files {
        if let Err(e) = kw_core::wisdom::WisdomFile::load(&f) {
            return ShardState::Incomplete(format!(
                "its wisdom is damaged: {e}; repair or remove {} and run `kw slurm merge` \
                 again (--resubmit-missing counts the shard as done)",
                f.display()
            ));
        }
    }
    state
}

/// Runs the merge; an error when any shard is missing or incomplete.
pub fn run(shared: &Path) -> Result<()> {
    let manifest = Manifest::load(shared)?;
    let states: Vec<(usize, ShardState)> = (0..manifest.tasks)
        .map(|t| (t, readable(shared, t, shard_state(shared, &manifest, t))))
        .collect();
    let complete: Vec<PathBuf> = states
        .iter()
        .filter(|(_, s)| s.is_complete())
        .map(|(t, _)| ShardDir::new(shared, *t).wisdom())
        .collect();
    let out = merged_dir(shared);
    if !complete.is_empty() {
        super::super::wisdom::merge(&out, &complete)?;
    }
    let problems = describe_unfinished(&manifest, &states);
    println!(
        "kw slurm merge: {} of {} shard(s) complete and merged into {}",
        complete.len(),
        manifest.tasks,
        out.display()
    );
    if problems.is_empty() {
        println!(
            "kw slurm merge: every shard is in; ship {} (or merge it into a project's \
             wisdom with `kw wisdom merge`)",
            out.display()
        );
        return Ok(());
    }
    for p in &problems {
        eprintln!("kw slurm merge: {p}");
    }
    bail!(
        "{} of {} shard(s) missing or incomplete (the tasks' output is in {}); submit \
         only those with `kw slurm --resubmit-missing {}`",
        problems.len(),
        manifest.tasks,
        shared.join(SLURM_LOGS).display(),
        shared.display()
    )
}
