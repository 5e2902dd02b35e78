//! `KW_TUNE=online`: the first launch of a size no wisdom covers only enqueues device copies
//! of its buffers on its queue; the tuning's thread reads them back and writes the capture.
//! Checked by order of events, not by time: the read-back of the copies is held at a gate
//! until the test opens it, so the launch returning before any read-back, the capture
//! appearing only after, and the capture holding the launch's inputs although the
//! application overwrote them right after the launch are facts, not races. On PoCL (skipped
//! without an OpenCL device).

mod common;
#[path = "common/gated.rs"]
mod gated;

use gated::HANG_GUARD;
use kernel_wisdom::WisdomKernel;
use kernel_wisdom::{bundled, set_tune_settings, DeviceBuffer, TuneMode, TuneSettings};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Mem, Queue, RawMem, Snapshot,
};
use kw_core::{def_eval::Geometry, device::DeviceInfo};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::Instant;

/// What the snapshots saw: reads by thread, and whether the gate is open.
#[derive(Default)]
struct Seen {
    /// Snapshots made, and the thread that made each.
    made: Vec<ThreadId>,
    /// Snapshot reads: the reading thread's name, and whether it is the thread that made
    /// the snapshot.
    reads: Vec<(String, bool)>,
    open: bool,
}

#[derive(Default)]
struct Gate {
    seen: Mutex<Seen>,
    changed: Condvar,
}

impl Gate {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(&self) {
        self.seen().open = true;
        self.changed.notify_all();
    }
}

/// A real device whose snapshots' read-backs wait for the gate (a read on the thread that
/// made the snapshot, which would be the launch's, does not wait: it is recorded).
struct HeldReads {
    inner: Arc<dyn Device>,
    gate: Arc<Gate>,
}

struct HeldSnapshot {
    inner: Box<dyn Snapshot>,
    gate: Arc<Gate>,
    made_by: ThreadId,
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

impl Device for HeldReads {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        self.inner.compile(req)
    }
    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        self.inner.alloc(bytes)
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
        let made_by = std::thread::current().id();
        self.gate.seen().made.push(made_by);
        Ok(Box::new(HeldSnapshot {
            inner,
            gate: Arc::clone(&self.gate),
            made_by,
        }))
    }
}

/// The capture files under `dir` (recursively).
fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            out.extend(captures(&p));
        } else if p.extension().is_some_and(|x| x == "kwcap") {
            out.push(p);
        }
    }
    out
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn the_first_launch_only_enqueues_copies_and_the_capture_holds_its_inputs() {
    let Some(real) = common::device() else {
        return;
    };
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let root =
        std::env::temp_dir().join(format!("kw-online-capture-{}-{nonce}", std::process::id()));
    let online = root.join("online");
    std::fs::create_dir_all(root.join("wisdom")).unwrap();
    // No `kw` to run: the tuning stops after writing the capture (and says why).
    std::env::set_var("KW_BIN", root.join("no-such-kw"));
    let mut settings = TuneSettings::new(TuneMode::Online);
    settings.dir = Some(online.clone());
    set_tune_settings(settings);

    let gate = Arc::new(Gate::default());
    let device: Arc<dyn Device> = Arc::new(HeldReads {
        inner: real,
        gate: Arc::clone(&gate),
    });
    let kernel = WisdomKernel::new(bundled::vector_add().unwrap(), Arc::clone(&device))
        .unwrap()
        .with_wisdom_dir(root.join("wisdom"));
    let n = 10_007usize;
    let a_in: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b_in: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let a = DeviceBuffer::from_slice(device.as_ref(), &a_in).unwrap();
    let b = DeviceBuffer::from_slice(device.as_ref(), &b_in).unwrap();
    let c = DeviceBuffer::<f32>::from_slice(device.as_ref(), &vec![-1.0; n]).unwrap();
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];

    kernel.launch(&args).unwrap();
    // The launch returned with every read-back held at the gate: nothing was copied to the
    // host on this thread, and no capture exists yet.
    {
        let seen = gate.seen();
        assert_eq!(seen.made.len(), 2, "copies before and after the launch");
        let me = std::thread::current().id();
        assert!(seen.made.iter().all(|t| *t == me), "made on the launch");
        assert!(
            seen.reads.iter().all(|(_, same)| !same),
            "read back on the launching thread: {:?}",
            seen.reads
        );
        assert!(seen.reads.is_empty(), "no read-back passed the closed gate");
    }
    assert!(
        captures(&online).is_empty(),
        "no capture before the read-back"
    );

    // The application overwrites its inputs and output at once (same queue, after the
    // launch), and launches again.
    a.write(&vec![7.0; n]).unwrap();
    b.write(&vec![9.0; n]).unwrap();
    kernel.launch(&args).unwrap();
    assert!(c.to_vec().unwrap().iter().all(|&v| v == 16.0));
    assert!(
        captures(&online).is_empty(),
        "still no capture: the gate holds"
    );

    gate.open();
    let began = Instant::now();
    let capture = loop {
        if let Some(p) = captures(&online).into_iter().next() {
            break p;
        }
        assert!(began.elapsed() < HANG_GUARD, "the capture never appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let seen = gate.seen();
    assert_eq!(seen.reads.len(), 2, "{:?}", seen.reads);
    assert!(
        seen.reads
            .iter()
            .all(|(name, same)| !same && name == "kw-online-tuning"),
        "read back on the tuning's thread only: {:?}",
        seen.reads
    );
    drop(seen);
    let cap = kw_capture::Capture::open(&capture).unwrap();
    assert_eq!(floats(&cap.read_buffer("a.before").unwrap()), a_in);
    assert_eq!(floats(&cap.read_buffer("b.before").unwrap()), b_in);
    assert_eq!(floats(&cap.read_buffer("c.before").unwrap()), vec![-1.0; n]);
    let want: Vec<f32> = a_in.iter().zip(&b_in).map(|(x, y)| x + y).collect();
    assert_eq!(floats(&cap.read_buffer("c.after").unwrap()), want);
    let _ = std::fs::remove_dir_all(&root);
}
