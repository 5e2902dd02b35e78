//! [`capture_launch`]: compiles and runs one launch here and now and writes its capture at
//! once, through the same recorder as the runtime ([`before_launch`] / [`after_launch`]).
//! Used by `kw tune --bundled` (a self-contained measurement) and by tests; applications
//! capture through the runtime instead.

use super::error::RecordError;
use super::recorder::{after_launch, before_launch};
use crate::CaptureWriter;
use kw_core::backend::{Device, DeviceMemory, KernelArg, Queue};
use kw_core::kernel_def::eval::ArgView;
use kw_core::{backend::BackendError, config::Config, kernel_def::KernelDef};
use std::path::{Path, PathBuf};

pub use kw_core::scalar::{HostArg, SymbolValue};

/// What a self-contained launch needs beside the definition: the arguments, the
/// constant-memory symbols' contents and, optionally, expected outputs that replace the
/// launch's own as the capture's reference.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchData<'a> {
    /// One per argument of the definition.
    pub args: &'a [HostArg],
    /// The contents of the definition's symbols.
    pub symbols: &'a [SymbolValue],
    /// `(argument index, expected contents)` of written buffers (e.g. a T1 file's
    /// `ReferenceArguments`).
    pub references: &'a [(usize, Vec<u8>)],
}

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
    let data = LaunchData {
        args,
        ..LaunchData::default()
    };
    capture_launch_with(dir, stem, def, config, device, data)
}

/// [`capture_launch`] with symbols and reference outputs ([`LaunchData`]).
pub fn capture_launch_with(
    dir: &Path,
    stem: &str,
    def: &KernelDef,
    config: Option<&Config>,
    device: &dyn Device,
    data: LaunchData<'_>,
) -> Result<PathBuf, RecordError> {
    let args = data.args;
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
                "the kernel is written for {}, the device is a {} device",
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
                kw_core::kernel_def::check::format_problems(&problems)
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
    check_symbols(def, data.symbols)?;
    let kernel = device
        .compile(&spec.request())
        .map_err(|e| device_err("compiling", e))?;
    kw_core::backend::write_symbols(device, kernel.as_ref(), data.symbols)
        .map_err(|e| device_err("setting constant symbols", e))?;
    let before = before_launch(
        dir.to_path_buf(),
        def,
        device,
        Queue::DEFAULT,
        &kargs,
        &lens,
    )?
    .named(stem)
    .with_symbols(data.symbols.to_vec());
    device
        .launch(kernel.as_ref(), &geometry, &kargs)
        .map_err(|e| device_err("launching", e))?;
    let mut job = after_launch(
        before,
        def,
        device,
        Queue::DEFAULT,
        &config,
        &problem_size,
        &kargs,
    )?;
    replace_references(&mut job, def, data.references)?;
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

/// Checks the symbols' contents against the definition: every declared symbol set once,
/// of its type, no longer than declared.
fn check_symbols(def: &KernelDef, symbols: &[SymbolValue]) -> Result<(), RecordError> {
    let invalid = |reason: String| RecordError::Invalid {
        kernel: def.kernel_name.clone(),
        reason,
    };
    for d in &def.symbols {
        let Some(v) = symbols.iter().find(|v| v.name == d.name) else {
            return Err(invalid(format!("constant symbol `{}` is not set", d.name)));
        };
        kw_core::kernel_def::check_symbol_value(d, v).map_err(invalid)?;
    }
    if let Some(v) = symbols
        .iter()
        .find(|v| !def.symbols.iter().any(|d| d.name == v.name))
    {
        return Err(invalid(format!(
            "constant symbol `{}` is not declared by the definition",
            v.name
        )));
    }
    Ok(())
}

/// Replaces the reference contents of the arguments `references` names (the launch's own
/// output stays only where no reference is given).
fn replace_references(
    job: &mut crate::CaptureJob,
    def: &KernelDef,
    references: &[(usize, Vec<u8>)],
) -> Result<(), RecordError> {
    for (index, bytes) in references {
        let arg = def.args.get(*index).ok_or_else(|| RecordError::Invalid {
            kernel: def.kernel_name.clone(),
            reason: format!("a reference output names argument {index}, which is not declared"),
        })?;
        let frame = super::recorder::output_frame_name(&arg.name);
        let slot = job
            .buffers
            .iter_mut()
            .find(|b| b.name == frame)
            .ok_or_else(|| RecordError::Invalid {
                kernel: def.kernel_name.clone(),
                reason: format!(
                    "argument `{}` has no output to compare with a reference",
                    arg.name
                ),
            })?;
        if slot.bytes().len() != bytes.len() {
            return Err(RecordError::Invalid {
                kernel: def.kernel_name.clone(),
                reason: format!(
                    "the reference of `{}` holds {} bytes, the argument {}",
                    arg.name,
                    bytes.len(),
                    slot.bytes().len()
                ),
            });
        }
        *slot = crate::CaptureBuffer::new(&frame, arg.ty.name(), bytes.clone());
    }
    Ok(())
}
