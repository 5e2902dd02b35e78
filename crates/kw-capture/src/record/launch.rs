//! [`capture_launch`]: compiles and runs one launch here and now and writes its capture at
//! once, through the same recorder as the runtime ([`before_launch`] / [`after_launch`]).
//! Used by `kw tune --bundled` (a self-contained measurement) and by tests; applications
//! capture through the runtime instead.

use super::error::RecordError;
use super::recorder::{after_launch, before_launch};
use crate::CaptureWriter;
use kw_core::backend::{ArgView, Device, DeviceMemory, KernelArg, Queue};
use kw_core::{backend::BackendError, config::Config, kernel_def::KernelDef};
use std::path::{Path, PathBuf};

pub use kw_core::scalar::HostArg;

/// Compiles `def` with `config` (its default when `None`) on `device` (through
/// [`KernelDef::compile_spec`], as the runtime does), uploads `args`, launches once and writes
/// the capture `dir/<stem>.kwcap`. Returns the file.
pub fn capture_launch(
    dir: &Path,
    stem: &str,
    def: &KernelDef,
    config: Option<&Config>,
    device: &dyn Device,
    args: &[HostArg],
) -> Result<PathBuf, RecordError> {
    let device_err = |what: &'static str, source: BackendError| RecordError::Launch {
        kernel: def.kernel_name.clone(),
        what,
        source: Box::new(source),
    };
    let info = device.info();
    if def.backend != info.backend {
        return Err(RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!(
                "the kernel is written for {}, the device is an {} device",
                def.backend, info.backend
            ),
        });
    }
    let problems = def.check(Some(info));
    if !problems.is_empty() {
        return Err(RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!(
                "invalid definition:\n{}",
                kw_core::def_check::format_problems(&problems)
            ),
        });
    }
    if args.len() != def.args.len() {
        return Err(RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!(
                "{} argument(s) given, {} declared",
                args.len(),
                def.args.len()
            ),
        });
    }
    let mut mems: Vec<Option<Box<dyn DeviceMemory>>> = Vec::with_capacity(args.len());
    for a in args {
        mems.push(match a {
            HostArg::Buffer { bytes, .. } => {
                let m = device
                    .alloc(bytes.len())
                    .map_err(|e| device_err("allocating a buffer", e))?;
                m.write(0, bytes)
                    .map_err(|e| device_err("uploading a buffer", e))?;
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
                KernelArg::device_buffer(m.as_ref(), *ty, bytes.len() / ty.size().max(1))
            }
            (HostArg::Scalar(s), _) => KernelArg::Scalar(*s),
            (HostArg::Buffer { .. }, None) => unreachable!("every buffer was allocated"),
        })
        .collect();
    let config = config.cloned().unwrap_or_else(|| def.default_config());
    def.space(Some(info))?
        .check_config(&config)
        .map_err(|reason| RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!("{{{config}}} is not a valid configuration: {reason}"),
        })?;
    let info = Some(info);
    let view = ArgView(&kargs);
    let problem_size = def.problem_size_for(&view, info)?;
    if let Some((i, len, want)) = def.first_short_buffer(&kargs, &problem_size, info)? {
        return Err(RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!(
                "argument {i} `{}` holds {len} elements, the launch needs {want}",
                def.args[i].name
            ),
        });
    }
    def.check_at_launch(&config, &problem_size, Some(&view), info)
        .map_err(|reason| RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!("{{{config}}} is not valid at this launch: {reason}"),
        })?;
    let lens = def.buffer_lens(&kargs, &problem_size, info)?;
    let geometry = def.geometry(&config, &problem_size, Some(&view), info)?;
    let spec = def.compile_spec(&config, info)?;
    let kernel = device
        .compile(&spec.request())
        .map_err(|e| device_err("compiling", e))?;
    let before = before_launch(
        dir.to_path_buf(),
        def,
        device,
        Queue::DEFAULT,
        &kargs,
        &lens,
    )?
    .named(stem);
    device
        .launch(kernel.as_ref(), &geometry, &kargs)
        .map_err(|e| device_err("launching", e))?;
    let job = after_launch(
        before,
        def,
        device,
        Queue::DEFAULT,
        &config,
        &problem_size,
        &kargs,
    )?;
    CaptureWriter::default()
        .write(&job.dir, &job.file_stem, &job.metadata, &job.buffers)
        .map(|w| w.path)
        .map_err(|source| RecordError::Write {
            path: job
                .dir
                .join(format!("{}.{}", job.file_stem, crate::EXTENSION)),
            source: Box::new(source),
        })
}
