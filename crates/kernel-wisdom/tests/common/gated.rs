//! [`GatedDevice`]: a real device whose compiles of one chosen configuration announce
//! themselves and (optionally) wait until the test opens a gate: a compile that is slow
//! deterministically, so that tests can assert what happens meanwhile by order of events,
//! not by wall-clock thresholds. Shared by the concurrency tests and the first-launch bench.
//! It can hold the read-backs of its snapshots ([`Device::snapshot_on`]) too, and record
//! which thread made and read each (the online tuning's first launch).
#![allow(dead_code)]

use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Mem, Queue, RawMem, Snapshot,
};
use kw_core::{device::DeviceInfo, kernel_def::eval::Geometry};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How long a test waits for an event that must come before it calls the code hung (a
/// deadlock guard: in a passing run the event comes at once).
pub const HANG_GUARD: Duration = Duration::from_secs(120);

#[derive(Default)]
struct GateState {
    /// Compiles of the gated configuration that have started.
    entered: usize,
    open: bool,
}

/// The gate one configuration's compiles pass.
#[derive(Default)]
pub struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets every held compile (and every later one) through.
    pub fn open(&self) {
        self.lock().open = true;
        self.changed.notify_all();
    }

    /// Whether the gate is open.
    pub fn is_open(&self) -> bool {
        self.lock().open
    }

    /// How many compiles of the gated configuration have started.
    pub fn entered(&self) -> usize {
        self.lock().entered
    }

    /// Waits until `n` compiles of the gated configuration have started. Panics (after
    /// opening the gate, so that no thread stays stuck) when that takes [`HANG_GUARD`].
    pub fn wait_entered(&self, n: usize) {
        let state = self.lock();
        let (state, timeout) = self
            .changed
            .wait_timeout_while(state, HANG_GUARD, |s| s.entered < n)
            .unwrap_or_else(PoisonError::into_inner);
        drop(state);
        if timeout.timed_out() {
            self.open();
            panic!("the gated compile never started");
        }
    }

    /// Called by a gated compile: counts it, then waits for the gate if it holds.
    fn pass(&self, hold: bool) {
        let mut state = self.lock();
        state.entered += 1;
        self.changed.notify_all();
        if hold {
            let _open = self
                .changed
                .wait_while(state, |s| !s.open)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A device that delegates everything to `inner`; compiles whose defines contain
/// `gated = (NAME, VALUE)` (VALUE `*`: any value) pass [`GatedDevice::gate`] (held there
/// until it opens when `hold`).
/// Every compile request is counted by its defines.
pub struct GatedDevice {
    inner: Arc<dyn Device>,
    gated: (String, String),
    hold: bool,
    gate: Arc<Gate>,
    compiles: Mutex<HashMap<String, usize>>,
    snapshots: Option<Arc<SnapshotGate>>,
}

impl GatedDevice {
    /// Gates the compiles of configurations whose define `name` is `value`; with `hold` they
    /// wait for [`Gate::open`], without it they only announce themselves.
    pub fn new(inner: Arc<dyn Device>, name: &str, value: &str, hold: bool) -> GatedDevice {
        GatedDevice {
            inner,
            gated: (name.to_string(), value.to_string()),
            hold,
            gate: Arc::new(Gate::default()),
            compiles: Mutex::new(HashMap::new()),
            snapshots: None,
        }
    }

    /// Holds the read-backs of its snapshots at a [`SnapshotGate`] (see [`Self::snapshots`]).
    pub fn with_held_snapshots(mut self) -> GatedDevice {
        self.snapshots = Some(Arc::default());
        self
    }

    /// The snapshots' gate ([`Self::with_held_snapshots`]).
    pub fn snapshots(&self) -> Option<Arc<SnapshotGate>> {
        self.snapshots.clone()
    }

    /// The gate.
    pub fn gate(&self) -> Arc<Gate> {
        Arc::clone(&self.gate)
    }

    /// How many compiles were requested with `name=value` among their defines.
    pub fn compiles_with(&self, name: &str, value: &str) -> usize {
        let needle = format!("{name}={value};");
        self.compiles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(k, _)| k.contains(&needle))
            .map(|(_, n)| n)
            .sum()
    }

    /// Compile requests per distinct set of defines.
    pub fn compile_counts(&self) -> Vec<usize> {
        let map = self.compiles.lock().unwrap_or_else(PoisonError::into_inner);
        map.values().copied().collect()
    }
}

impl Device for GatedDevice {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        let key: String = req
            .defines
            .iter()
            .map(|(k, v)| format!("{k}={v};"))
            .collect();
        *self
            .compiles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default() += 1;
        if req
            .defines
            .iter()
            .any(|(k, v)| *k == self.gated.0 && (self.gated.1 == "*" || *v == self.gated.1))
        {
            self.gate.pass(self.hold);
        }
        self.inner.compile(req)
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        self.inner.alloc(bytes)
    }

    fn launch(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<(), BackendError> {
        self.inner.launch(kernel, geometry, args)
    }

    fn launch_on(
        &self,
        queue: Queue<'_>,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        self.inner
            .launch_on(queue, kernel, geometry, args, want_event)
    }

    fn synchronize_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        self.inner.synchronize_queue(queue)
    }

    fn view(&self, raw: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        self.inner.view(raw)
    }

    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        self.inner.launch_timed(kernel, geometry, args)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.synchronize()
    }

    fn snapshot_on(
        &self,
        queue: Queue<'_>,
        sources: &[(Mem<'_>, usize)],
    ) -> Result<Box<dyn Snapshot>, BackendError> {
        let inner = self.inner.snapshot_on(queue, sources)?;
        let Some(gate) = &self.snapshots else {
            return Ok(inner);
        };
        let made_by = std::thread::current().id();
        gate.seen().made.push(made_by);
        Ok(Box::new(HeldSnapshot {
            inner,
            gate: Arc::clone(gate),
            made_by,
        }))
    }
}

/// What the snapshots saw: reads by thread, and whether the gate is open.
#[derive(Default)]
pub struct Seen {
    /// Snapshots made, and the thread that made each.
    pub made: Vec<std::thread::ThreadId>,
    /// Snapshot reads: the reading thread's name, and whether it is the thread that made
    /// the snapshot.
    pub reads: Vec<(String, bool)>,
    open: bool,
}

/// The gate the read-backs of [`GatedDevice::with_held_snapshots`]'s snapshots pass: held
/// until it opens, except a read on the thread that made the snapshot (recorded, not held).
#[derive(Default)]
pub struct SnapshotGate {
    seen: Mutex<Seen>,
    changed: Condvar,
}

impl SnapshotGate {
    /// What the snapshots saw so far.
    pub fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets every held read-back (and every later one) through.
    pub fn open(&self) {
        self.seen().open = true;
        self.changed.notify_all();
    }
}

struct HeldSnapshot {
    inner: Box<dyn Snapshot>,
    gate: Arc<SnapshotGate>,
    made_by: std::thread::ThreadId,
}

impl Snapshot for HeldSnapshot {
    fn read(self: Box<Self>) -> Result<Vec<Vec<u8>>, BackendError> {
        let me = std::thread::current();
        let same = me.id() == self.made_by;
        let name = me.name().unwrap_or("unnamed").to_string();
        let seen = self.gate.seen();
        let mut seen = if same {
            seen
        } else {
            self.gate
                .changed
                .wait_while(seen, |s| !s.open)
                .unwrap_or_else(PoisonError::into_inner)
        };
        seen.reads.push((name, same));
        drop(seen);
        self.inner.read()
    }
}
