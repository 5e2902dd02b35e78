//! Recording a launch without waiting for it: device-to-device copies of the buffers,
//! enqueued on the launch's queue before and after it ([`Device::snapshot_on`]), read back,
//! assembled and written on another thread ([`Deferred::finish`]). The calling thread only
//! enqueues: no host copy, no wait, no file.

use super::error::RecordError;
use super::recorder::{assemble, captured_bytes, ArgKind, Frames};
use crate::CaptureJob;
use kw_core::backend::{Device, KernelArg, Mem, Queue, Snapshot};
use kw_core::scalar::SymbolValue;
use kw_core::{config::Config, device::DeviceInfo, kernel_def::KernelDef};
use std::path::{Path, PathBuf};

/// The copies enqueued before a launch.
pub struct SnapshotBefore {
    dir: PathBuf,
    lens: Vec<u64>,
    snapshot: Box<dyn Snapshot>,
    symbols: Vec<SymbolValue>,
}

impl SnapshotBefore {
    /// Records the constant-memory symbols as set for this launch.
    pub fn with_symbols(mut self, symbols: Vec<SymbolValue>) -> SnapshotBefore {
        self.symbols = symbols;
        self
    }
}

/// A launch whose buffers were copied on the device before and after it: sent to another
/// thread, [`Deferred::finish`] reads the copies and makes the capture job.
pub struct Deferred {
    dir: PathBuf,
    kinds: Vec<ArgKind>,
    before: Box<dyn Snapshot>,
    after: Box<dyn Snapshot>,
    symbols: Vec<SymbolValue>,
    config: Config,
    problem_size: [i64; 3],
}

/// The buffer arguments' memory and captured bytes, in order.
fn sources<'a>(args: &[KernelArg<'a>], lens: &[u64]) -> Vec<(Mem<'a>, usize)> {
    args.iter()
        .enumerate()
        .filter_map(|(i, a)| match (a, captured_bytes(a, lens, i)) {
            (KernelArg::Buffer { mem, .. }, Some(bytes)) => Some((*mem, bytes)),
            _ => None,
        })
        .collect()
}

/// Before the launch, on its `queue`: enqueues copies of every buffer argument's first
/// `lens[i]` elements (the capture's inputs), after the work already on the queue.
pub fn snapshot_before(
    dir: PathBuf,
    device: &dyn Device,
    queue: Queue<'_>,
    args: &[KernelArg<'_>],
    lens: &[u64],
) -> Result<SnapshotBefore, RecordError> {
    let snapshot = device
        .snapshot_on(queue, &sources(args, lens))
        .map_err(|e| RecordError::DeviceCopy {
            when: "before",
            source: Box::new(e),
        })?;
    Ok(SnapshotBefore {
        dir,
        lens: lens.to_vec(),
        snapshot,
        symbols: Vec::new(),
    })
}

/// After the launch (enqueued with `config` on the same `queue`): enqueues copies of the
/// buffers again (the reference output).
pub fn snapshot_after(
    before: SnapshotBefore,
    device: &dyn Device,
    queue: Queue<'_>,
    config: &Config,
    problem_size: &[i64; 3],
    args: &[KernelArg<'_>],
) -> Result<Deferred, RecordError> {
    let after = device
        .snapshot_on(queue, &sources(args, &before.lens))
        .map_err(|e| RecordError::DeviceCopy {
            when: "after",
            source: Box::new(e),
        })?;
    Ok(Deferred {
        dir: before.dir,
        kinds: args.iter().map(ArgKind::of).collect(),
        before: before.snapshot,
        after,
        symbols: before.symbols,
        config: config.clone(),
        problem_size: *problem_size,
    })
}

/// The contents of a snapshot per argument (`None` for scalars).
fn per_arg(
    kinds: &[ArgKind],
    snapshot: Box<dyn Snapshot>,
    when: &'static str,
) -> Result<Vec<Option<Vec<u8>>>, RecordError> {
    let mut contents = snapshot
        .read()
        .map_err(|e| RecordError::DeviceCopy {
            when,
            source: Box::new(e),
        })?
        .into_iter();
    Ok(kinds
        .iter()
        .map(|k| match k {
            ArgKind::Buffer(_) => contents.next(),
            ArgKind::Scalar(_) => None,
        })
        .collect())
}

impl Deferred {
    /// The directory the capture goes to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits for the copies (this thread only), reads them back, makes the directory and
    /// returns the job that writes the capture.
    pub fn finish(self, def: &KernelDef, info: &DeviceInfo) -> Result<CaptureJob, RecordError> {
        let before = per_arg(&self.kinds, self.before, "before")?;
        let after = per_arg(&self.kinds, self.after, "after")?;
        kw_core::files::FileModes::get()
            .create_dir_all(&self.dir)
            .map_err(|source| RecordError::Directory {
                dir: self.dir.clone(),
                source,
            })?;
        let frames = Frames {
            dir: self.dir,
            stem: None,
            args: &self.kinds,
            before,
            after,
            symbols: self.symbols,
        };
        assemble(frames, def, info, &self.config, &self.problem_size)
    }
}
