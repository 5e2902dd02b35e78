//! [`ReplaySession`]: one capture loaded onto one device. Inputs are uploaded once; every
//! buffer the launch writes keeps a pristine device copy of its captured input state, so that
//! [`ReplaySession::restore`] can reset it (device to device) before every run.
//!
//! The session's phases, one file each: `load.rs` (open, check, decompress, upload),
//! `measure.rs` (restore, launch, time), `outputs.rs` and `guarded.rs` (verify); this file
//! holds the type and what it tells about the capture.

use crate::device_verify::DeviceComparer;
use crate::error::ReplayError;
use crate::verify::Tolerance;
use kw_core::backend::{Device, DeviceMemory};
use kw_core::compile_cache::CacheStats;
use kw_core::scalar::SymbolValue;
use kw_core::{
    capture_meta::CaptureMetadata, config::Config, kernel_def::eval::DefError,
    kernel_def::eval::Geometry, kernel_def::Access, kernel_def::ArgKind, kernel_def::KernelDef,
    scalar::ScalarType, scalar::ScalarValue, space::TuningSpace, value::Value,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod guarded;
mod load;
mod measure;
mod outputs;

/// One argument on the device.
enum ReplayArg {
    Scalar(ScalarValue),
    Buffer {
        name: String,
        elem: ScalarType,
        len: usize,
        /// What the kernel reads and writes.
        working: Box<dyn DeviceMemory>,
        /// The captured input state, when the launch writes the buffer.
        pristine: Option<Box<dyn DeviceMemory>>,
        /// The captured output, when the capture holds one.
        reference: Option<Vec<u8>>,
        /// The captured output on the device, for device-side verification.
        reference_dev: Option<Box<dyn DeviceMemory>>,
        /// The definition's tolerance for this buffer (the default when it declares none).
        tolerance: Tolerance,
        /// The reference's magnitude (its largest finite |value|), which scales it.
        magnitude: f64,
        /// Declared read and written (moves its bytes twice per launch).
        inout: bool,
    },
}

/// A capture loaded onto a device, ready to run any configuration of its kernel.
pub struct ReplaySession {
    path: PathBuf,
    device: Arc<dyn Device>,
    meta: CaptureMetadata,
    space: TuningSpace,
    problem_size: [i64; 3],
    arg_values: Vec<Value>,
    args: Vec<ReplayArg>,
    /// Device-side verification, or why outputs are compared on the host.
    comparer: Result<DeviceComparer, String>,
    /// The device's compile-cache counters before the session compiled anything.
    cache_baseline: Option<CacheStats>,
    /// Where automatic verification goes once timed: `Some(true)` on the device.
    auto: Mutex<Option<bool>>,
    /// The constant-memory symbols as captured, written into a module before its launches.
    symbols: Vec<SymbolValue>,
}

/// Where outputs are compared with the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyWhere {
    /// On the device where it can (the comparison kernel) and where that is faster than on
    /// the host (see [`ReplaySession::verify_at`]), else on the host.
    Auto,
    /// On the device only (an error where it cannot).
    Device,
    /// On the host: every output read back and compared there.
    Host,
}

/// What an argument needs once it was checked against its definition.
enum ArgPlan {
    /// A scalar: its captured value and the value passed to the kernel.
    Scalar(Value, ScalarValue),
    /// A buffer of `len` elements, `bytes` bytes.
    Buffer { len: usize, bytes: usize },
}

/// The key of a frame being read: the argument's index and whether it is its reference.
type FrameKey = (usize, bool);

impl ReplaySession {
    /// Why outputs are verified on the host, or `None` when the device compares them.
    pub fn host_verification_reason(&self) -> Option<&str> {
        self.comparer.as_ref().err().map(String::as_str)
    }

    /// The device's compile-cache counters before this session compiled anything (its
    /// comparison kernels included).
    pub fn cache_baseline(&self) -> Option<CacheStats> {
        self.cache_baseline
    }

    /// The capture file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The device replaying it.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The capture's metadata.
    pub fn metadata(&self) -> &CaptureMetadata {
        &self.meta
    }

    /// The kernel definition.
    pub fn def(&self) -> &KernelDef {
        &self.meta.kernel
    }

    /// The tuning space on this device.
    pub fn space(&self) -> &TuningSpace {
        &self.space
    }

    /// The captured problem size.
    pub fn problem_size(&self) -> [i64; 3] {
        self.problem_size
    }

    /// Whether the capture holds a reference output to verify against.
    pub fn has_reference(&self) -> bool {
        self.args.iter().any(|a| {
            matches!(
                a,
                ReplayArg::Buffer {
                    reference: Some(_),
                    ..
                }
            )
        })
    }

    /// Why the captured reference cannot verify this launch's results, or `None` when every
    /// buffer the definition declares written (`Out`/`InOut`) has a captured output: the
    /// buffers declared written whose output the capture lacks (captures of older versions
    /// kept only the outputs a launch changed), or, when none is declared written, that the
    /// capture holds no output at all.
    pub fn reference_gap(&self) -> Option<String> {
        reference_gap(&self.meta)
    }

    /// Bytes the launch moves at least once: every buffer once, in/out buffers twice.
    pub fn bytes_moved(&self) -> u64 {
        let mut total = 0u64;
        for a in &self.args {
            if let ReplayArg::Buffer {
                len, elem, inout, ..
            } = a
            {
                let b = (*len * elem.size()) as u64;
                total += if *inout { 2 * b } else { b };
            }
        }
        total
    }

    /// The launch geometry of a configuration.
    pub fn geometry(&self, config: &Config) -> Result<Geometry, DefError> {
        self.def().geometry(
            config,
            &self.problem_size,
            Some(&self.arg_values),
            Some(self.device.info()),
        )
    }

    /// The constant-memory symbols as captured.
    pub fn symbols(&self) -> &[SymbolValue] {
        &self.symbols
    }
}

/// The SHA-like checksum of a capture file recorded in wisdom provenance: `blake3:HEX` of the
/// whole file.
pub fn capture_checksum(path: &Path) -> Result<String, ReplayError> {
    let rules = kw_core::files::ReadRules::new("capture", kw_core::files::caps::CAPTURE);
    let (mut file, _) = kw_core::files::open_regular(path, rules).map_err(|e| ReplayError::Io {
        path: path.to_path_buf(),
        source: e.into_io(),
    })?;
    let mut hasher = blake3::Hasher::new();
    std::io::copy(&mut file, &mut hasher).map_err(|source| ReplayError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(format!("blake3:{}", hasher.finalize().to_hex()))
}

/// Why a capture cannot verify a run (`None`: it can): the buffers its kernel declares
/// written (`Out`/`InOut`) that have no reference output (captures of older versions kept
/// only the outputs a launch changed), or, when none is declared written, that it holds no
/// output at all. Needs only the metadata ([`ReplaySession::inspect`]).
pub fn reference_gap(meta: &CaptureMetadata) -> Option<String> {
    let missing: Vec<String> = meta
        .args
        .iter()
        .zip(&meta.kernel.args)
        .filter(|(a, d)| d.kind == ArgKind::Buffer && d.access != Access::In && a.output.is_none())
        .map(|(a, _)| format!("`{}`", a.name))
        .collect();
    let has_reference = meta.args.iter().any(|a| a.output.is_some());
    match missing.len() {
        0 if has_reference => None,
        0 => Some(
            "the capture holds no reference output (no buffer is declared written, \
             Out/InOut, and the launch changed none)"
                .to_string(),
        ),
        1 => Some(format!(
            "buffer {} is declared written but the capture holds no reference output for it",
            missing[0]
        )),
        _ => Some(format!(
            "buffers {} are declared written but the capture holds no reference output for them",
            missing.join(", ")
        )),
    }
}
