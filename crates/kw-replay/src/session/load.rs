//! Loading a capture onto a device: the capture opened and checked, every argument planned,
//! frames decompressed in parallel and uploaded once, pristine copies of written buffers,
//! the constant symbols read, the references uploaded for verification on the device.

use super::{ArgPlan, FrameKey, ReplayArg, ReplaySession};
use crate::device_verify::DeviceComparer;
use crate::error::ReplayError;
use crate::verify::magnitude;
use kw_capture::{Capture, CaptureError};
use kw_core::backend::Device;
use kw_core::scalar::SymbolValue;
use kw_core::{
    backend::BackendError, capture_meta::CaptureMetadata, capture_meta::CapturedArg,
    kernel_def::Access, kernel_def::ArgDef, kernel_def::ArgKind, kernel_def::KernelDef,
    scalar::ScalarType, scalar::ScalarValue, space::TuningSpace, value::Value,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::Scope;

/// Frames decompressed at once by [`decode_frames`] (each on several threads when large).
const FRAMES_IN_FLIGHT: usize = 3;

impl ReplaySession {
    /// Reads a capture's metadata and its kernel's tuning space on a device described by
    /// `info`, with the checks of [`ReplaySession::load`] but without uploading anything (for
    /// a process that only drives the tuning while workers replay).
    pub fn inspect(
        path: &Path,
        info: &kw_core::device::DeviceInfo,
    ) -> Result<(CaptureMetadata, TuningSpace), ReplayError> {
        let (_, meta, space) = open_checked(path, info)?;
        Ok((meta, space))
    }
    /// Opens `path`, checks its metadata and uploads its buffers to `device` (any device of
    /// the capture's backend).
    ///
    /// Every argument is checked against the definition before anything is read, and then
    /// every buffer frame's length (input and reference) against its argument's, before
    /// anything is decompressed (a header may declare any length); the buffers' frames are
    /// then decompressed in parallel (a few frames at a time, each on several threads) while
    /// the ones already decompressed are uploaded, in argument order. The pristine copy of
    /// a written buffer is a device-to-device copy of its upload. Past the length checks,
    /// the error is the one a one-by-one load would meet first.
    pub fn load(path: &Path, device: Arc<dyn Device>) -> Result<ReplaySession, ReplayError> {
        let cache_baseline = device.compile_cache().map(|c| c.stats());
        let info = device.info();
        let (capture, meta, space) = open_checked(path, info)?;
        let def = &meta.kernel;
        let mut problem_size = [1i64; 3];
        for (axis, v) in meta.problem_size.iter().take(3).enumerate() {
            problem_size[axis] = *v;
        }
        // The arguments up to the first that does not fit the definition (its error comes
        // after those of the arguments before it, as in a load one by one).
        let mut plans = Vec::new();
        let mut misfit = None;
        for (a, d) in meta.args.iter().zip(&def.args) {
            match plan_arg(path, def, info, a, d) {
                Ok(p) => plans.push(p),
                Err(e) => {
                    misfit = Some(e);
                    break;
                }
            }
        }
        // The frames to read: (argument, is the reference, frame name), in argument order.
        let reads: Vec<(usize, bool, &str)> = meta
            .args
            .iter()
            .zip(&plans)
            .enumerate()
            .filter(|(_, (_, p))| matches!(p, ArgPlan::Buffer { .. }))
            .flat_map(|(i, (a, _))| {
                let input = a.input.as_deref().map(|f| (i, false, f));
                let output = a.output.as_deref().map(|f| (i, true, f));
                input.into_iter().chain(output)
            })
            .collect();
        // A frame whose length is not its argument's is refused before it is decompressed:
        // the header may declare any length (gigabytes from a file of kilobytes).
        for &(i, reference, name) in &reads {
            let (Some(ArgPlan::Buffer { bytes, .. }), Some(declared)) = (
                plans.get(i),
                capture
                    .buffers()
                    .find(|b| b.name == name)
                    .map(|b| b.raw_len),
            ) else {
                continue;
            };
            if declared != *bytes as u64 {
                return Err(ReplayError::Argument {
                    path: path.to_path_buf(),
                    kernel: def.kernel_name.clone(),
                    arg: meta.args[i].name.clone(),
                    message: format!(
                        "{} frame `{name}` holds {declared} bytes, expected {bytes}",
                        if reference { "reference" } else { "input" }
                    ),
                });
            }
        }
        let mut args = Vec::new();
        let mut arg_values = Vec::new();
        // The comparison kernels compile while the buffers load.
        let outputs: Vec<ScalarType> = reads
            .iter()
            .filter(|(_, reference, _)| *reference)
            .map(|&(i, _, _)| meta.args[i].ty)
            .collect();
        let mut comparer = Err("the capture holds no reference output".to_string());
        std::thread::scope(|s| -> Result<(), ReplayError> {
            let preparing = (!outputs.is_empty()).then(|| {
                let device = device.clone();
                let outputs = &outputs;
                s.spawn(move || prepare_comparer(device, outputs))
            });
            let mut frames = decode_frames(s, &capture, &reads);
            for (i, ((a, d), plan)) in meta.args.iter().zip(&def.args).zip(plans).enumerate() {
                let (len, bytes) = match plan {
                    ArgPlan::Scalar(v, s) => {
                        arg_values.push(v);
                        args.push(ReplayArg::Scalar(s));
                        continue;
                    }
                    ArgPlan::Buffer { len, bytes } => (len, bytes),
                };
                let arg_err = |message: String| ReplayError::Argument {
                    path: path.to_path_buf(),
                    kernel: def.kernel_name.clone(),
                    arg: a.name.clone(),
                    message,
                };
                let capture_err = |e| ReplayError::Capture {
                    path: path.to_path_buf(),
                    source: Box::new(e),
                };
                // No input frame: the buffer starts as zeros (filled on the device).
                let input = match &a.input {
                    Some(_) => Some(frames.take(i, false).map_err(capture_err)?),
                    None => None,
                };
                if let Some(input) = input.as_ref().filter(|d| d.len() != bytes) {
                    return Err(arg_err(format!(
                        "input frame holds {} bytes, expected {bytes}",
                        input.len()
                    )));
                }
                let reference = match &a.output {
                    Some(_) => Some(frames.take(i, true).map_err(capture_err)?),
                    None => None,
                };
                let dev_err = |what: &str, e: BackendError| ReplayError::Device {
                    path: path.to_path_buf(),
                    kernel: def.kernel_name.clone(),
                    what: format!("{what} `{}`", a.name),
                    source: Box::new(e),
                };
                // Every buffer carries a guard region past its end (`crate::guard`).
                let alloc = |what: &str| {
                    device
                        .alloc(bytes + crate::guard::GUARD_BYTES)
                        .map_err(|e| dev_err(what, e))
                };
                let what = "uploading buffer";
                let working = alloc(what)?;
                match input {
                    Some(data) => working.write(0, &data),
                    None => working.fill_zero(),
                }
                .and_then(|()| crate::guard::fill(working.as_ref(), bytes))
                .map_err(|e| dev_err(what, e))?;
                let written = reference.is_some() || d.access != Access::In;
                let pristine = if written {
                    let what = "uploading the pristine copy of";
                    let p = alloc(what)?;
                    p.copy_from(working.as_ref())
                        .map_err(|e| dev_err(what, e))?;
                    Some(p)
                } else {
                    None
                };
                arg_values.push(Value::Int(len as i64));
                let magnitude = reference.as_ref().map_or(0.0, |r| magnitude(a.ty, r));
                args.push(ReplayArg::Buffer {
                    name: a.name.clone(),
                    elem: a.ty,
                    len,
                    working,
                    pristine,
                    reference,
                    reference_dev: None,
                    tolerance: d.tolerance.unwrap_or_default(),
                    magnitude,
                    inout: d.access == Access::InOut,
                });
            }
            if let Some(job) = preparing {
                comparer = job
                    .join()
                    .unwrap_or_else(|_| Err("the comparison kernels' compile panicked".into()));
            }
            match misfit {
                Some(e) => Err(e),
                None => Ok(()),
            }
        })?;
        if comparer.is_ok() {
            upload_references(&device, &mut args);
        }
        let symbols = load_symbols(path, &capture, &meta)?;
        Ok(ReplaySession {
            path: path.to_path_buf(),
            device,
            meta,
            space,
            problem_size,
            arg_values,
            args,
            comparer,
            cache_baseline,
            auto: Mutex::new(None),
            symbols,
        })
    }
}

/// A scalar of type `ty` from a captured value.
fn scalar_of(ty: ScalarType, v: &Value) -> Option<ScalarValue> {
    let int = || v.as_int();
    Some(match ty {
        ScalarType::I8 => ScalarValue::new(i8::try_from(int()?).ok()?),
        ScalarType::I16 => ScalarValue::new(i16::try_from(int()?).ok()?),
        ScalarType::I32 => ScalarValue::new(i32::try_from(int()?).ok()?),
        ScalarType::I64 => ScalarValue::new(int()?),
        ScalarType::U8 => ScalarValue::new(u8::try_from(int()?).ok()?),
        ScalarType::U16 => ScalarValue::new(u16::try_from(int()?).ok()?),
        ScalarType::U32 => ScalarValue::new(u32::try_from(int()?).ok()?),
        ScalarType::U64 => ScalarValue::new(u64::try_from(int()?).ok()?),
        ScalarType::F32 => ScalarValue::new(v.as_f64()? as f32),
        ScalarType::F64 => ScalarValue::new(v.as_f64()?),
    })
}

/// Opens a capture and checks its metadata against a device of its backend: the capture, its
/// metadata and the kernel's tuning space on that device.
fn open_checked(
    path: &Path,
    info: &kw_core::device::DeviceInfo,
) -> Result<(Capture, CaptureMetadata, TuningSpace), ReplayError> {
    // Replaying runs the kernel source a capture holds: a capture anyone may write is code
    // anyone may have written (docs/threat-model.md).
    #[cfg(unix)]
    if let Ok(m) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        if m.permissions().mode() & 0o002 != 0 {
            return Err(ReplayError::Metadata {
                path: path.to_path_buf(),
                message: format!(
                    "anyone may write this capture (mode {:o}), and replaying it compiles and \
                     runs the kernel source it holds: not replaying it (run `chmod o-w` on it \
                     if you trust its contents)",
                    m.permissions().mode() & 0o7777
                ),
            });
        }
    }
    let capture = Capture::open(path).map_err(|e| ReplayError::Capture {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let meta: CaptureMetadata = capture.metadata_as().map_err(|e| ReplayError::Capture {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let bad_meta = |message: String| ReplayError::Metadata {
        path: path.to_path_buf(),
        message,
    };
    meta.check_version().map_err(bad_meta)?;
    let def = &meta.kernel;
    if info.backend != def.backend {
        return Err(ReplayError::WrongBackend {
            path: path.to_path_buf(),
            kernel: def.kernel_name.clone(),
            expected: def.backend,
            found: info.backend,
            device: info.name.clone(),
        });
    }
    if meta.args.len() != def.args.len() {
        return Err(bad_meta(format!(
            "{} captured arguments, the definition of `{}` has {}",
            meta.args.len(),
            def.kernel_name,
            def.args.len()
        )));
    }
    // The recorded problem size must be the one the definition gives for the captured
    // arguments: it decides the space, the grid and the slot of the wisdom record written.
    // (Compared as three axes, missing ones 1: older writers may have kept trailing ones.)
    // Evaluated with the capturing device (a size may read `device.*`), and not checked where
    // it reads a buffer's length: captures before 2026-11-25 stored a buffer's declared
    // length, not its real one.
    let axes = def.problem_size.len().clamp(1, 3);
    let recorded =
        (meta.problem_size.len() <= 3).then(|| crate::launch_space::captured_problem_size(&meta));
    let Some(recorded) = recorded else {
        return Err(bad_meta(format!(
            "problem size {:?} recorded: more than three axes",
            meta.problem_size
        )));
    };
    let computed = if reads_a_buffer_length(def) {
        Ok(recorded)
    } else {
        def.problem_size_for(
            &crate::launch_space::captured_arg_values(&meta),
            Some(&meta.device),
        )
    };
    match computed {
        Ok(ps) if recorded == ps => {}
        Ok(ps) => {
            return Err(bad_meta(format!(
                "problem size {:?} recorded, but `{}`'s definition gives {:?} for the captured \
                 arguments",
                meta.problem_size,
                def.kernel_name,
                &ps[..axes]
            )))
        }
        Err(e) => {
            return Err(bad_meta(format!(
                "the problem size of the captured arguments: {e}"
            )))
        }
    }
    // The configuration the application launched with is one of the definition's.
    for (name, value) in meta.config.iter() {
        match def.parameters.iter().find(|p| p.name == *name) {
            Some(p) if p.values.contains(value) => {}
            Some(p) => {
                return Err(bad_meta(format!(
                    "the captured configuration sets `{name}` to {value}, not one of its values \
                     ({})",
                    p.values
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            None => {
                return Err(bad_meta(format!(
                    "the captured configuration sets `{name}`, which `{}` does not declare",
                    def.kernel_name
                )))
            }
        }
    }
    let space = crate::launch_space::space_of(&meta, info).map_err(|e| ReplayError::Space {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    Ok((capture, meta, space))
}

/// Whether `def`'s problem size reads the length of a buffer argument.
fn reads_a_buffer_length(def: &KernelDef) -> bool {
    use kw_core::expr::{ArgRef, Expr};
    let buffer = |r: &ArgRef| {
        let i = match r {
            ArgRef::Index(i) => Some(*i),
            ArgRef::Name(n) => def.args.iter().position(|a| a.name == *n),
        };
        i.and_then(|i| def.args.get(i))
            .is_some_and(|a| a.kind == ArgKind::Buffer)
    };
    def.problem_size.iter().any(|e| {
        let mut found = false;
        e.visit(&mut |n| found |= matches!(n, Expr::Arg(r) if buffer(r)));
        found
    })
}

/// Checks a captured argument against its definition, before anything is read or allocated.
fn plan_arg(
    path: &Path,
    def: &KernelDef,
    info: &kw_core::device::DeviceInfo,
    a: &CapturedArg,
    d: &ArgDef,
) -> Result<ArgPlan, ReplayError> {
    let arg_err = |message: String| ReplayError::Argument {
        path: path.to_path_buf(),
        kernel: def.kernel_name.clone(),
        arg: a.name.clone(),
        message,
    };
    if a.ty != d.ty {
        return Err(arg_err(format!("captured as {}, declared {}", a.ty, d.ty)));
    }
    match d.kind {
        ArgKind::Scalar => {
            let v = a.value.as_ref().ok_or_else(|| arg_err("no value".into()))?;
            let s = scalar_of(a.ty, v)
                .ok_or_else(|| arg_err(format!("value {v} does not fit {}", a.ty)))?;
            Ok(ArgPlan::Scalar(v.clone(), s))
        }
        ArgKind::Buffer => {
            let len = a.len.ok_or_else(|| arg_err("no length".into()))?;
            // Checked before anything is allocated: a corrupt or hostile length is an
            // error, never an overflow or a huge allocation.
            let bytes = len.checked_mul(a.ty.size()).ok_or_else(|| {
                arg_err(format!(
                    "length {len} x {} bytes per element overflows",
                    a.ty.size()
                ))
            })?;
            let memory = info.global_memory_bytes;
            if memory > 0 && bytes as u64 > memory {
                return Err(arg_err(format!(
                    "{bytes} bytes ({len} elements) exceed the device's {memory} bytes of memory"
                )));
            }
            Ok(ArgPlan::Buffer { len, bytes })
        }
    }
}

/// Frames being decompressed on threads of a scope, taken in any order.
struct Frames {
    path: PathBuf,
    done: Receiver<(FrameKey, Result<Vec<u8>, CaptureError>)>,
    ready: HashMap<FrameKey, Result<Vec<u8>, CaptureError>>,
}

impl Frames {
    /// The frame of argument `arg` (its reference when `reference`), waiting for it.
    fn take(&mut self, arg: usize, reference: bool) -> Result<Vec<u8>, CaptureError> {
        loop {
            if let Some(r) = self.ready.remove(&(arg, reference)) {
                return r;
            }
            match self.done.recv() {
                Ok((key, r)) => {
                    self.ready.insert(key, r);
                }
                // Every reader ended without it: one panicked (the scope reports the panic).
                Err(_) => {
                    return Err(CaptureError::Decompress {
                        path: self.path.clone(),
                        buffer: format!("argument {arg}"),
                        detail: "a decompression thread ended early".into(),
                    })
                }
            }
        }
    }
}

/// Starts decompressing `reads` (`(argument, is its reference, frame name)`), in order, on
/// up to [`FRAMES_IN_FLIGHT`] threads of `scope`. The threads stop once the returned
/// [`Frames`] is dropped (after the frame each is reading). A thread hands its frame over
/// only when the load asks for frames (a rendezvous channel), so at most about
/// [`FRAMES_IN_FLIGHT`] decompressed frames wait in memory however large the capture.
fn decode_frames<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    capture: &'env Capture,
    reads: &'env [(usize, bool, &'env str)],
) -> Frames {
    let (tx, done) = std::sync::mpsc::sync_channel(0);
    let next = Arc::new(AtomicUsize::new(0));
    for _ in 0..reads.len().min(FRAMES_IN_FLIGHT) {
        let (tx, next) = (tx.clone(), next.clone());
        scope.spawn(move || loop {
            let Some(&(arg, reference, name)) = reads.get(next.fetch_add(1, Ordering::Relaxed))
            else {
                return;
            };
            if tx
                .send(((arg, reference), capture.read_buffer(name)))
                .is_err()
            {
                return; // the load stopped at an error
            }
        });
    }
    Frames {
        path: capture.path().to_path_buf(),
        done,
        ready: HashMap::new(),
    }
}

/// The constant-memory symbols the definition declares, read from the capture's frames and
/// checked against their declarations (every one must be there: without its contents no
/// configuration computes what the application's did).
fn load_symbols(
    path: &Path,
    capture: &Capture,
    meta: &CaptureMetadata,
) -> Result<Vec<SymbolValue>, ReplayError> {
    let def = &meta.kernel;
    let err = |name: &str, message: String| ReplayError::Argument {
        path: path.to_path_buf(),
        kernel: def.kernel_name.clone(),
        arg: format!("constant symbol {name}"),
        message,
    };
    let mut out = Vec::with_capacity(def.symbols.len());
    for d in &def.symbols {
        let Some(c) = meta.symbols.iter().find(|c| c.name == d.name) else {
            return Err(err(&d.name, "the capture holds no contents for it".into()));
        };
        let bytes = capture
            .read_buffer(&c.frame)
            .map_err(|e| ReplayError::Capture {
                path: path.to_path_buf(),
                source: Box::new(e),
            })?;
        let value = SymbolValue {
            name: c.name.clone(),
            ty: c.ty,
            bytes,
        };
        kw_core::kernel_def::check_symbol_value(d, &value).map_err(|m| err(&d.name, m))?;
        out.push(value);
    }
    Ok(out)
}

/// The device comparison of a capture whose outputs have elements of `outputs` types: the
/// comparer and its kernel for each type, compiled; `Err` says why the host compares instead.
fn prepare_comparer(
    device: Arc<dyn Device>,
    outputs: &[ScalarType],
) -> Result<DeviceComparer, String> {
    let comparer = DeviceComparer::new(device)
        .map_err(|e| format!("the comparison kernel does not run on this device: {e}"))?;
    for &elem in outputs {
        comparer.kernel(elem).map_err(|e| {
            format!("the comparison kernel for {elem} does not run on this device: {e}")
        })?;
    }
    Ok(comparer)
}

/// Uploads each reference output once, for the device comparison. (A reference whose length
/// differs from its buffer's is refused when the session loads; one that did would stay on
/// the host, where the host comparison reports it.)
fn upload_references(device: &Arc<dyn Device>, args: &mut [ReplayArg]) {
    for a in args.iter_mut() {
        if let ReplayArg::Buffer {
            elem,
            len,
            reference: Some(want),
            reference_dev,
            ..
        } = a
        {
            if want.len() != *len * elem.size() {
                continue;
            }
            if let Ok(m) = device.alloc(want.len()) {
                if m.write(0, want).is_ok() {
                    *reference_dev = Some(m);
                }
            }
        }
    }
}
