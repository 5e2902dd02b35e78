//! Recording one launch: host copies of the buffer arguments before and after the launch,
//! the metadata, and the [`CaptureJob`] to write.

use super::error::RecordError;
use super::provenance::provenance_now;
use crate::{capture_file_stem, CaptureBuffer, CaptureJob};
use kw_core::backend::{Device, DeviceMemory, KernelArg, Mem, Queue};
use kw_core::capture_meta::{
    CaptureMetadata, CapturedArg, CapturedSymbol, CAPTURE_METADATA_VERSION,
};
use kw_core::scalar::SymbolValue;
use kw_core::{config::Config, kernel_def::Access, kernel_def::KernelDef};
use std::path::PathBuf;

/// The buffers' contents before a captured launch (`None` for scalars), and the number of
/// elements captured per argument (the declared lengths).
pub struct Before {
    dir: PathBuf,
    contents: Vec<Option<Vec<u8>>>,
    lens: Vec<u64>,
    stem: Option<String>,
    symbols: Vec<SymbolValue>,
}

impl Before {
    /// Records the constant-memory symbols as set for this launch (their contents go into
    /// the capture, and replay writes them into every configuration's module).
    pub fn with_symbols(mut self, symbols: Vec<SymbolValue>) -> Before {
        self.symbols = symbols;
        self
    }

    /// Names the capture file `<stem>.kwcap` (instead of [`capture_file_stem`] of the
    /// tuning key and problem size).
    pub fn named(mut self, stem: &str) -> Before {
        self.stem = Some(stem.to_string());
        self
    }
}

/// The name of the frame holding an argument's contents before the launch.
pub fn input_frame_name(arg_name: &str) -> String {
    format!("{arg_name}.before")
}

/// The name of the frame holding a constant-memory symbol's contents.
pub fn symbol_frame_name(symbol: &str) -> String {
    format!("{symbol}.symbol")
}

/// The name of the frame holding an argument's contents after the launch.
pub fn output_frame_name(arg_name: &str) -> String {
    format!("{arg_name}.after")
}

fn arg_name(def: &KernelDef, index: usize) -> String {
    def.args
        .get(index)
        .map_or_else(|| format!("arg{index}"), |a| a.name.clone())
}

/// Copies `mem`'s first `bytes` bytes into a fresh host allocation.
fn to_host(
    mem: &dyn DeviceMemory,
    bytes: usize,
    def: &KernelDef,
    index: usize,
    when: &'static str,
) -> Result<Vec<u8>, RecordError> {
    // Probe first: `vec![0; n]` aborts on failure, but it asks the allocator for zeroed pages
    // (no memset), so the only page touches are the copy's own.
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(bytes)
        .map_err(|_| RecordError::HostMemory {
            index,
            name: arg_name(def, index),
            bytes,
        })?;
    drop(probe);
    let mut out = vec![0u8; bytes];
    mem.read(0, &mut out).map_err(|source| RecordError::Copy {
        index,
        name: arg_name(def, index),
        when,
        source: Box::new(source),
    })?;
    Ok(out)
}

/// The bytes captured of argument `arg` at position `index`: its first `lens[index]`
/// elements (never more than its memory holds).
pub(super) fn captured_bytes(arg: &KernelArg<'_>, lens: &[u64], index: usize) -> Option<usize> {
    match arg {
        KernelArg::Buffer { mem, elem, .. } => {
            let want = lens.get(index).copied().unwrap_or(0);
            Some(
                usize::try_from(want)
                    .ok()
                    .and_then(|n| n.checked_mul(elem.size()))
                    .unwrap_or(usize::MAX)
                    .min(mem.len_bytes()),
            )
        }
        KernelArg::Scalar(_) => None,
    }
}

/// Copies the first `lens[i]` elements of every buffer argument `i` (the launch checked
/// that they fit). The application's own memory is read through a view of the device.
fn copy_all(
    def: &KernelDef,
    device: &dyn Device,
    args: &[KernelArg<'_>],
    lens: &[u64],
    when: &'static str,
) -> Result<Vec<Option<Vec<u8>>>, RecordError> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let (KernelArg::Buffer { mem, .. }, Some(bytes)) = (a, captured_bytes(a, lens, i))
            else {
                return Ok(None);
            };
            let copy_err = |source| RecordError::Copy {
                index: i,
                name: arg_name(def, i),
                when,
                source: Box::new(source),
            };
            match mem {
                Mem::Device(m) => to_host(*m, bytes, def, i, when).map(Some),
                Mem::Raw(r) => {
                    let view = device.view(*r).map_err(copy_err)?;
                    to_host(view.as_ref(), bytes, def, i, when).map(Some)
                }
            }
        })
        .collect()
}

/// Before the launch: makes sure the directory exists, waits for the work already on
/// `queue` (the application may be filling the inputs there) and copies every buffer
/// argument's first `lens[i]` elements.
pub fn before_launch(
    dir: PathBuf,
    def: &KernelDef,
    device: &dyn Device,
    queue: Queue<'_>,
    args: &[KernelArg<'_>],
    lens: &[u64],
) -> Result<Before, RecordError> {
    kw_core::files::FileModes::get()
        .create_dir_all(&dir)
        .map_err(|source| RecordError::Directory {
            dir: dir.clone(),
            source,
        })?;
    device
        .synchronize_queue(queue)
        .map_err(|e| RecordError::Synchronize(Box::new(e)))?;
    Ok(Before {
        contents: copy_all(def, device, args, lens, "before")?,
        lens: lens.to_vec(),
        stem: None,
        symbols: Vec::new(),
        dir,
    })
}

/// After the launch (enqueued with `config`): waits for it, copies the buffers again, keeps
/// as the reference output every buffer the definition declares written (`Out`/`InOut`),
/// changed or not (an idempotent launch leaves its output as it found it, and that is still
/// the output to verify against), and any other buffer the launch changed; returns the job
/// that writes the capture `<dir>/<stem>.kwcap` (see [`Before::named`]; by default the stem is
/// [`capture_file_stem`] of the tuning key and problem size).
pub fn after_launch(
    mut before: Before,
    def: &KernelDef,
    device: &dyn Device,
    queue: Queue<'_>,
    config: &Config,
    problem_size: &[i64; 3],
    args: &[KernelArg<'_>],
) -> Result<CaptureJob, RecordError> {
    device
        .synchronize_queue(queue)
        .map_err(|e| RecordError::Synchronize(Box::new(e)))?;
    let after = copy_all(def, device, args, &before.lens, "after")?;
    let kinds: Vec<ArgKind> = args.iter().map(ArgKind::of).collect();
    let stem = before.stem.clone();
    let symbols = std::mem::take(&mut before.symbols);
    let info = device.info();
    assemble(
        Frames {
            dir: before.dir,
            stem,
            args: &kinds,
            before: before.contents,
            after,
            symbols,
        },
        def,
        info,
        config,
        problem_size,
    )
}

/// A launch argument as a capture records it: a buffer's element type or a scalar's value.
#[derive(Clone, Copy, Debug)]
pub(super) enum ArgKind {
    Buffer(kw_core::scalar::ScalarType),
    Scalar(kw_core::scalar::ScalarValue),
}

impl ArgKind {
    pub(super) fn of(arg: &KernelArg<'_>) -> ArgKind {
        match arg {
            KernelArg::Buffer { elem, .. } => ArgKind::Buffer(*elem),
            KernelArg::Scalar(s) => ArgKind::Scalar(*s),
        }
    }
}

/// What a capture holds besides the definition and the device: the buffers' contents before
/// and after the launch (`None` for scalars), and the symbols.
pub(super) struct Frames<'a> {
    pub(super) dir: PathBuf,
    pub(super) stem: Option<String>,
    pub(super) args: &'a [ArgKind],
    pub(super) before: Vec<Option<Vec<u8>>>,
    pub(super) after: Vec<Option<Vec<u8>>>,
    pub(super) symbols: Vec<SymbolValue>,
}

/// The capture job of a launch: keeps as the reference output every buffer the definition
/// declares written and any other buffer the launch changed (see [`after_launch`]).
pub(super) fn assemble(
    frames: Frames<'_>,
    def: &KernelDef,
    info: &kw_core::device::DeviceInfo,
    config: &Config,
    problem_size: &[i64; 3],
) -> Result<CaptureJob, RecordError> {
    let Frames {
        dir,
        stem,
        args,
        before,
        after,
        symbols: symbol_values,
    } = frames;
    let mut buffers = Vec::new();
    let mut captured = Vec::with_capacity(args.len());
    for (i, ((a, pre), post)) in args.iter().zip(before).zip(after).enumerate() {
        let name = arg_name(def, i);
        let mut entry = CapturedArg {
            name: name.clone(),
            ty: match a {
                ArgKind::Buffer(elem) => *elem,
                ArgKind::Scalar(s) => s.ty(),
            },
            len: None,
            value: None,
            input: None,
            output: None,
        };
        match (a, pre, post) {
            (ArgKind::Buffer(elem), Some(pre), Some(post)) => {
                entry.len = Some(pre.len() / elem.size().max(1));
                let input = input_frame_name(&name);
                let declared_written = def.args.get(i).is_some_and(|d| d.access != Access::In);
                if declared_written || post != pre {
                    let output = output_frame_name(&name);
                    buffers.push(CaptureBuffer::new(&output, elem.name(), post));
                    entry.output = Some(output);
                }
                buffers.push(CaptureBuffer::new(&input, elem.name(), pre));
                entry.input = Some(input);
            }
            (ArgKind::Scalar(s), _, _) => entry.value = Some(s.to_value()),
            _ => {}
        }
        captured.push(entry);
    }
    let mut symbols = Vec::with_capacity(symbol_values.len());
    for sym in symbol_values {
        let frame = symbol_frame_name(&sym.name);
        symbols.push(CapturedSymbol {
            name: sym.name,
            ty: sym.ty,
            len: sym.bytes.len() / sym.ty.size().max(1),
            frame: frame.clone(),
        });
        buffers.push(CaptureBuffer::new(&frame, sym.ty.name(), sym.bytes));
    }
    let metadata = CaptureMetadata {
        format: "kernel-wisdom/capture".to_string(),
        version: CAPTURE_METADATA_VERSION,
        tuning_key: def.tuning_key.clone(),
        kernel: def.clone(),
        // As many axes as the definition declares (`[n]` for a 1-D kernel).
        problem_size: problem_size[..def.problem_size.len().clamp(1, 3)].to_vec(),
        config: config.clone(),
        args: captured,
        symbols,
        device: info.clone(),
        provenance: provenance_now(info),
    };
    let metadata = serde_json::to_value(&metadata).map_err(RecordError::Metadata)?;
    let file_stem = match stem {
        Some(stem) => stem,
        None => {
            let size: Vec<u64> = problem_size
                .iter()
                .map(|&v| u64::try_from(v).unwrap_or(0))
                .collect();
            capture_file_stem(&def.tuning_key, &size)
        }
    };
    Ok(CaptureJob {
        dir,
        file_stem,
        metadata,
        buffers,
    })
}
