//! [`capture_launch`]: writes a capture of one launch made here and now, in exactly the
//! schema of [`CaptureMetadata`] (frames named by [`CapturedArg::input`] /
//! [`CapturedArg::output`]). Used by `kw tune --bundled` (a self-contained measurement) and
//! by tests; applications capture through the runtime instead.

use crate::error::ReplayError;
use kernel_wisdom::WisdomKernel;
use kw_capture::{CaptureBuffer, CaptureWriter};
use kw_core::backend::{Device, DeviceMemory, KernelArg};
use kw_core::capture_meta::{CaptureProvenance, CAPTURE_METADATA_VERSION};
use kw_core::{
    Access, BackendError, CaptureMetadata, CapturedArg, Config, KernelDef, Scalar, ScalarType,
    ScalarValue,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A launch argument on the host.
#[derive(Clone, Debug)]
pub enum HostArg {
    /// A buffer: element type and raw bytes.
    Buffer {
        /// Element type.
        ty: ScalarType,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// A scalar.
    Scalar(ScalarValue),
}

impl HostArg {
    /// A buffer holding `data`.
    pub fn buffer<T: Scalar>(data: &[T]) -> HostArg {
        HostArg::Buffer {
            ty: T::TYPE,
            bytes: bytemuck::cast_slice(data).to_vec(),
        }
    }

    /// A scalar.
    pub fn scalar<T: Scalar>(v: T) -> HostArg {
        HostArg::Scalar(ScalarValue::new(v))
    }
}

/// Launches `def` with `config` (its default when `None`) on `device` with `args`, and writes
/// the capture `dir/<stem>.kwcap`: every buffer before the launch, and after it for buffers
/// the launch changed or declares as written. Returns the file.
pub fn capture_launch(
    dir: &Path,
    stem: &str,
    def: &KernelDef,
    config: Option<&Config>,
    device: Arc<dyn Device>,
    args: &[HostArg],
) -> Result<PathBuf, ReplayError> {
    let kernel_name = def.kernel_name.clone();
    let dev_err = |what: &str, e: BackendError| ReplayError::Device {
        path: dir.join(stem),
        kernel: kernel_name.clone(),
        what: what.to_string(),
        source: Box::new(e),
    };
    let mut mems: Vec<Option<Box<dyn DeviceMemory>>> = Vec::new();
    for a in args {
        mems.push(match a {
            HostArg::Buffer { bytes, .. } => {
                let m = device.alloc(bytes.len()).map_err(|e| dev_err("alloc", e))?;
                m.write(0, bytes).map_err(|e| dev_err("upload", e))?;
                Some(m)
            }
            HostArg::Scalar(_) => None,
        });
    }
    let kargs: Vec<KernelArg<'_>> = args
        .iter()
        .zip(&mems)
        .map(|(a, m)| match (a, m) {
            (HostArg::Buffer { ty, bytes }, Some(m)) => {
                KernelArg::device_buffer(m.as_ref(), *ty, bytes.len() / ty.size())
            }
            (HostArg::Scalar(s), _) => KernelArg::Scalar(*s),
            (HostArg::Buffer { .. }, None) => unreachable!("every buffer was allocated"),
        })
        .collect();
    let launch_err = |e: kernel_wisdom::Error| ReplayError::Metadata {
        path: dir.join(stem),
        message: format!("capturing kernel `{}`: {e}", def.kernel_name),
    };
    let kernel = WisdomKernel::new(def.clone(), device.clone()).map_err(launch_err)?;
    let config = config.cloned().unwrap_or_else(|| def.default_config());
    let problem_size = kernel.problem_size(&kargs).map_err(launch_err)?;
    kernel
        .launch_with_config(&config, &kargs)
        .map_err(launch_err)?;
    device
        .synchronize()
        .map_err(|e| dev_err("synchronize", e))?;
    let mut captured = Vec::new();
    let mut buffers = Vec::new();
    for ((a, m), d) in args.iter().zip(&mems).zip(&def.args) {
        match (a, m) {
            (HostArg::Buffer { ty, bytes }, Some(m)) => {
                let mut after = vec![0u8; bytes.len()];
                m.read(0, &mut after).map_err(|e| dev_err("read back", e))?;
                let input = format!("{}.in", d.name);
                buffers.push(CaptureBuffer::new(&input, ty.name(), bytes.clone()));
                let output = (after != *bytes || d.access != Access::In).then(|| {
                    let name = format!("{}.out", d.name);
                    buffers.push(CaptureBuffer::new(&name, ty.name(), after));
                    name
                });
                captured.push(CapturedArg {
                    name: d.name.clone(),
                    ty: *ty,
                    len: Some(bytes.len() / ty.size()),
                    value: None,
                    input: Some(input),
                    output,
                });
            }
            (HostArg::Scalar(s), _) => captured.push(CapturedArg {
                name: d.name.clone(),
                ty: s.ty(),
                len: None,
                value: Some(s.to_value()),
                input: None,
                output: None,
            }),
            (HostArg::Buffer { .. }, None) => unreachable!("every buffer was allocated"),
        }
    }
    let info = device.info().clone();
    let meta = CaptureMetadata {
        format: "kernel-wisdom/capture".into(),
        version: CAPTURE_METADATA_VERSION,
        tuning_key: def.tuning_key.clone(),
        kernel: def.clone(),
        problem_size: problem_size[..def.problem_size.len().clamp(1, 3)].to_vec(),
        config,
        args: captured,
        provenance: CaptureProvenance {
            tool_version: env!("CARGO_PKG_VERSION").into(),
            driver_version: info.driver_version.clone(),
            ..CaptureProvenance::default()
        },
        device: info,
    };
    std::fs::create_dir_all(dir).map_err(|source| ReplayError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    CaptureWriter::default()
        .write(dir, stem, &meta, &buffers)
        .map(|w| w.path)
        .map_err(|e| ReplayError::Capture {
            path: dir.join(stem),
            source: Box::new(e),
        })
}
