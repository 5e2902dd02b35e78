//! `kw tune --devices`: the captures shared out over the devices. Devices are grouped by
//! model ([`super::device_set::by_model`]); every model tunes every capture of its backend
//! (its own results log and wisdom record), the models side by side. Within a model, a
//! queue of captures: a free device takes the next capture alone while the captures left
//! are at least as many as the free devices; when fewer are left, the free devices are split
//! over them, and the devices of one capture share its search ([`super::lanes`]). A device
//! joins a search only when it starts (a device that frees up later takes the next capture,
//! or waits).

use super::args::TuneArgs;
use super::device_set::{by_model, model_of, DeviceSet};
use super::one::{tune_one, Outcome};
use anyhow::Result;
use kernel_wisdom::ListedDevice;
use kw_tune::Stop;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// One capture to tune on one model.
pub(super) struct Task {
    /// The capture.
    pub(super) capture: PathBuf,
    /// Its results log.
    pub(super) log: PathBuf,
    /// Its stop condition.
    pub(super) stop: Stop,
    /// The model's name in file names (`None`: only one model tunes this capture).
    pub(super) model: Option<String>,
    /// The device dropped when this capture's run failed on it (the run then goes on from
    /// its log on another device; failing there too, the capture is to blame, and the device
    /// comes back).
    pub(super) suspect: Option<ListedDevice>,
}

/// The name a model gives its files (`foo.tune.jsonl` -> `foo.MODEL.tune.jsonl`): the device
/// name with anything but letters, digits, `-` and `_` made `-`.
pub(super) fn model_slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `path` for one model of several: `MODEL` inserted before the first dot of its file name.
pub(super) fn for_model(path: &Path, model: Option<&str>) -> PathBuf {
    let Some(model) = model else {
        return path.to_path_buf();
    };
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let named = match name.split_once('.') {
        Some((stem, rest)) => format!("{stem}.{model}.{rest}"),
        None => format!("{name}.{model}"),
    };
    path.with_file_name(named)
}

/// The devices of each model, with the captures it tunes (`tasks` made by `task` for a
/// capture and the model's slug, `None` when one model tunes that backend). A capture whose
/// backend cannot be read, or that no asked device can run, is `Err` in `refused`.
pub(super) type Plan = Vec<(Vec<ListedDevice>, Vec<Task>)>;

pub(super) fn plan(
    set: &DeviceSet,
    captures: &[PathBuf],
    task: &dyn Fn(&Path, Option<String>) -> Task,
    refused: &mut Vec<(PathBuf, anyhow::Error)>,
) -> Plan {
    let mut plan: Plan = Vec::new();
    let mut models_of: Vec<(kw_core::device::BackendKind, Vec<Vec<ListedDevice>>)> = Vec::new();
    for capture in captures {
        let groups = super::device::backend_of(capture).and_then(|backend| {
            if let Some((_, g)) = models_of.iter().find(|(b, _)| *b == backend) {
                return Ok(g.clone());
            }
            let g = by_model(set.resolve(backend)?);
            models_of.push((backend, g.clone()));
            Ok(g)
        });
        let groups = match groups {
            Ok(g) => g,
            Err(e) => {
                refused.push((capture.clone(), e));
                continue;
            }
        };
        let several = groups.len() > 1;
        for group in groups {
            let slug = several.then(|| model_slug(&model_of(&group[0]).0));
            let t = task(capture, slug);
            match plan.iter_mut().find(|(d, _)| d[0].index == group[0].index) {
                Some((_, tasks)) => tasks.push(t),
                None => plan.push((group, vec![t])),
            }
        }
    }
    plan
}

/// A capture's run as it ends: the task, the devices it ran on, how it ended.
pub(super) type Finished = (Task, Vec<ListedDevice>, Result<Outcome>);

/// Runs the plan: the models side by side, each model's captures as the module says;
/// `finished` gets each capture's outcome as it ends (in this thread).
pub(super) fn run(
    args: &TuneArgs,
    plan: Plan,
    cancel: &Arc<AtomicBool>,
    finished: &mut dyn FnMut(Finished),
) {
    let (tx, rx) = mpsc::channel::<Finished>();
    std::thread::scope(|scope| {
        for (devices, tasks) in plan {
            let tx = tx.clone();
            scope.spawn(move || one_model(args, devices, tasks.into(), cancel, &tx));
        }
        drop(tx);
        for done in rx {
            finished(done);
        }
    });
}

/// Why a capture's one-device run ended because its device failed (no worker could start
/// on it any more), if so.
fn device_failed(e: &anyhow::Error) -> Option<String> {
    match e.downcast_ref::<kw_tune::TuneError>() {
        Some(kw_tune::TuneError::Fatal { reason, .. }) => Some(reason.clone()),
        _ => None,
    }
}

/// One model's queue of captures over its devices.
fn one_model(
    args: &TuneArgs,
    mut free: Vec<ListedDevice>,
    mut queue: VecDeque<Task>,
    cancel: &Arc<AtomicBool>,
    out: &mpsc::Sender<Finished>,
) {
    let (tx, rx) = mpsc::channel::<Finished>();
    std::thread::scope(|scope| {
        let mut running = 0usize;
        loop {
            while !free.is_empty() && !cancel.load(Ordering::SeqCst) {
                let Some(task) = queue.pop_front() else {
                    break;
                };
                // One device each while the captures left are as many as the free devices;
                // fewer captures: the free devices split over them.
                let left = queue.len() + 1;
                let take = if left >= free.len() {
                    1
                } else {
                    free.len().div_ceil(left)
                };
                let devices: Vec<ListedDevice> = free.drain(..take).collect();
                let tx = tx.clone();
                running += 1;
                scope.spawn(move || {
                    // A capture that goes on after its device failed resumes its log.
                    let resumed = task.suspect.is_some().then(|| TuneArgs {
                        resume: true,
                        ..args.clone()
                    });
                    let args = resumed.as_ref().unwrap_or(args);
                    let outcome =
                        tune_one(args, &task.capture, &task.log, &task.stop, cancel, &devices);
                    let _ = tx.send((task, devices, outcome));
                });
            }
            if running == 0 {
                break;
            }
            let Ok((mut task, devices, outcome)) = rx.recv() else {
                break;
            };
            running -= 1;
            if let ([device], Err(e)) = (&devices[..], &outcome) {
                let others = !free.is_empty() || running > 0;
                match (device_failed(e), task.suspect.take()) {
                    (Some(why), None) if others && !cancel.load(Ordering::SeqCst) => {
                        eprintln!(
                            "kw tune: {} ({}) failed and is dropped: {why}; {} goes on from its \
                             log on another device",
                            super::device_set::label(device),
                            device.info.name,
                            task.capture.display()
                        );
                        task.suspect = Some(device.clone());
                        queue.push_front(task);
                        continue;
                    }
                    // It failed on a second device: the capture's fault, not the first's.
                    (_, Some(first)) => free.push(first),
                    (_, None) => {}
                }
            }
            // A device dropped from a search failed: it takes no more captures.
            let dropped = outcome.as_ref().map_or(&[][..], |o| &o.dropped[..]);
            free.extend(
                devices
                    .iter()
                    .filter(|d| !dropped.contains(&d.index))
                    .cloned(),
            );
            free.sort_by_key(|d| d.index);
            let _ = out.send((task, devices, outcome));
        }
    });
    // Every device of the model failed (or the run was cancelled): the rest is not tuned.
    for task in queue {
        let why = if cancel.load(Ordering::SeqCst) {
            anyhow::anyhow!("not started: the run was cancelled")
        } else {
            anyhow::anyhow!("not tuned: every device of this model failed")
        };
        let _ = out.send((task, Vec::new(), Err(why)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_files_carry_its_name() {
        assert_eq!(model_slug("NVIDIA H100 80GB HBM3"), "NVIDIA-H100-80GB-HBM3");
        assert_eq!(
            for_model(Path::new("/l/va.tune.jsonl"), Some("A100")),
            PathBuf::from("/l/va.A100.tune.jsonl")
        );
        assert_eq!(
            for_model(Path::new("out"), Some("A100")),
            PathBuf::from("out.A100")
        );
        assert_eq!(
            for_model(Path::new("va.tune.jsonl"), None),
            PathBuf::from("va.tune.jsonl")
        );
    }
}
