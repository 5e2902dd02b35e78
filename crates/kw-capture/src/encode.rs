//! Streaming encoder: dedupe, compress chunks on worker threads, write them in order, then the
//! header and the prefix.

use crate::buffer::CaptureBuffer;
use crate::error::{CaptureError, Result};
use crate::filter::{filter_name, shuffle, shuffle_width};
use crate::format::{
    BufferEntry, ChunkEntry, Compression, FrameEntry, Header, Prefix, END_MAGIC, FORMAT_NAME,
    FORMAT_VERSION, PREFIX_LEN,
};
use crate::hash::{chunk_digest, combine, ChunkDigest};
use crate::options::WriteOptions;
use std::collections::{BTreeMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Condvar, Mutex};

/// Sizes of an encoded capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncodedSizes {
    /// Total file length in bytes.
    pub file_len: u64,
    /// Sum of the raw lengths of all buffers (duplicates counted each time).
    pub raw_len: u64,
    /// Sum of the raw lengths of the stored frames (duplicates counted once).
    pub stored_raw_len: u64,
    /// Sum of the compressed lengths of all chunks.
    pub compressed_len: u64,
}

/// One chunk to compress.
struct Task<'a> {
    frame: usize,
    /// Shuffle width, if the frame is shuffled.
    shuffle: Option<usize>,
    offset_in_frame: u64,
    frame_len: u64,
    data: &'a [u8],
}

/// A compressed chunk.
struct Done {
    compressed: Vec<u8>,
    digest: ChunkDigest,
    compressed_hash: blake3::Hash,
}

/// Encodes a capture into `out` (positioned at its start). `label` names the file in errors.
pub(crate) fn encode<W: Write + Seek>(
    out: &mut W,
    label: &Path,
    options: &WriteOptions,
    metadata: serde_json::Value,
    buffers: &[CaptureBuffer],
) -> Result<EncodedSizes> {
    let invalid = |detail: String| CaptureError::InvalidInput {
        path: label.to_path_buf(),
        detail,
    };
    options.check().map_err(invalid)?;
    let mut names = HashSet::new();
    for b in buffers {
        if b.name.is_empty() {
            return Err(invalid("a buffer has an empty name".into()));
        }
        if !names.insert(b.name.as_str()) {
            return Err(invalid(format!("two buffers are named `{}`", b.name)));
        }
    }

    // Dedupe: a buffer whose bytes equal an earlier frame's shares that frame.
    let mut reps: Vec<usize> = Vec::new(); // frame -> index of the buffer stored in it
    let mut frame_of = Vec::with_capacity(buffers.len());
    for (i, b) in buffers.iter().enumerate() {
        let bytes = b.bytes();
        let same = reps.iter().position(|&r| {
            let other = buffers[r].bytes();
            other.len() == bytes.len() && (std::ptr::eq(other, bytes) || other == bytes)
        });
        frame_of.push(same.unwrap_or_else(|| {
            reps.push(i);
            reps.len() - 1
        }));
    }

    let chunk_size = options.chunk_size;
    let mut tasks = Vec::new();
    let shuffles: Vec<Option<usize>> = reps
        .iter()
        .map(|&r| {
            options
                .shuffle
                .then(|| shuffle_width(&buffers[r].elem_type))
                .flatten()
        })
        .collect();
    for (f, &r) in reps.iter().enumerate() {
        let data = buffers[r].bytes();
        for (k, c) in data.chunks(chunk_size).enumerate() {
            tasks.push(Task {
                frame: f,
                shuffle: shuffles[f],
                offset_in_frame: (k * chunk_size) as u64,
                frame_len: data.len() as u64,
                data: c,
            });
        }
    }

    let io_err = |op: &'static str| move |e| CaptureError::io(label, op, e);
    out.write_all(&[0u8; PREFIX_LEN])
        .map_err(io_err("writing"))?;
    let mut pos = PREFIX_LEN as u64;
    let mut chunks: Vec<Vec<ChunkEntry>> = vec![Vec::new(); reps.len()];
    let mut digests: Vec<Vec<ChunkDigest>> = vec![Vec::new(); reps.len()];
    run_pipeline(&tasks, options, |i, done| {
        let task = &tasks[i];
        out.write_all(&done.compressed).map_err(io_err("writing"))?;
        chunks[task.frame].push(ChunkEntry {
            offset: pos,
            compressed_len: done.compressed.len() as u64,
            raw_len: task.data.len() as u64,
            blake3: done.compressed_hash.to_hex().to_string(),
        });
        digests[task.frame].push(done.digest);
        pos += done.compressed.len() as u64;
        Ok(())
    })
    .map_err(|e| match e {
        PipelineError::Sink(e) => e,
        PipelineError::Compress(detail) => {
            CaptureError::io(label, "compressing", std::io::Error::other(detail))
        }
    })?;

    let mut sizes = EncodedSizes::default();
    let mut frames = Vec::with_capacity(reps.len());
    for (f, (&r, chunks)) in reps.iter().zip(chunks).enumerate() {
        let raw_len = buffers[r].bytes().len() as u64;
        let hash = combine(&digests[f], raw_len, chunk_size as u64).ok_or_else(|| {
            invalid("internal error: chunk digests do not cover the buffer".into())
        })?;
        let compressed_len = chunks.iter().map(|c| c.compressed_len).sum();
        sizes.stored_raw_len += raw_len;
        sizes.compressed_len += compressed_len;
        frames.push(FrameEntry {
            raw_len,
            compressed_len,
            blake3: hash.to_hex().to_string(),
            filter: shuffles[f].map(filter_name),
            chunks,
        });
    }
    let entries = buffers
        .iter()
        .zip(&frame_of)
        .map(|(b, &frame)| {
            sizes.raw_len += b.bytes().len() as u64;
            BufferEntry {
                name: b.name.clone(),
                elem_type: b.elem_type.clone(),
                raw_len: b.bytes().len() as u64,
                frame,
            }
        })
        .collect();
    let header = Header {
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        writer: concat!("kw-capture ", env!("CARGO_PKG_VERSION")).to_string(),
        compression: Compression {
            codec: "zstd".to_string(),
            level: options.level,
        },
        chunk_size: chunk_size as u64,
        metadata,
        buffers: entries,
        frames,
    };
    let json = serde_json::to_vec(&header)
        .map_err(|e| invalid(format!("metadata does not serialise: {e}")))?;
    out.write_all(&json).map_err(io_err("writing"))?;
    out.write_all(&END_MAGIC).map_err(io_err("writing"))?;
    let prefix = Prefix {
        version: FORMAT_VERSION,
        flags: 0,
        header_offset: pos,
        header_len: json.len() as u64,
        header_hash: *blake3::hash(&json).as_bytes(),
    };
    sizes.file_len = pos + json.len() as u64 + END_MAGIC.len() as u64;
    out.seek(SeekFrom::Start(0)).map_err(io_err("seeking"))?;
    out.write_all(&prefix.encode()).map_err(io_err("writing"))?;
    out.flush().map_err(io_err("writing"))?;
    Ok(sizes)
}

enum PipelineError {
    Compress(String),
    Sink(CaptureError),
}

/// Per-thread compression state: the compressor and the shuffle buffer.
#[derive(Default)]
struct Worker {
    compressor: Option<zstd::bulk::Compressor<'static>>,
    shuffled: Vec<u8>,
}

fn compress(
    worker: &mut Worker,
    level: i32,
    chunk_size: u64,
    task: &Task,
    mut compressed: Vec<u8>,
) -> Result<Done, String> {
    let c = match &mut worker.compressor {
        Some(c) => c,
        None => worker
            .compressor
            .insert(zstd::bulk::Compressor::new(level).map_err(|e| e.to_string())?),
    };
    let input = match task.shuffle {
        Some(width) => {
            shuffle(task.data, width, &mut worker.shuffled);
            &worker.shuffled[..]
        }
        None => task.data,
    };
    // Reuse the output allocation of an earlier chunk: no fresh pages to fault in.
    compressed.clear();
    compressed.reserve(zstd::zstd_safe::compress_bound(input.len()));
    c.compress_to_buffer(input, &mut compressed)
        .map_err(|e| e.to_string())?;
    let digest = chunk_digest(task.data, task.offset_in_frame, task.frame_len, chunk_size);
    let compressed_hash = blake3::hash(&compressed);
    Ok(Done {
        compressed,
        digest,
        compressed_hash,
    })
}

struct Shared {
    next: usize,
    written: usize,
    done: BTreeMap<usize, Result<Done, String>>,
    /// Output buffers of written chunks, for reuse.
    free: Vec<Vec<u8>>,
    abort: bool,
}

/// Compresses `tasks` on `options.threads` threads and hands the results to `sink` in task
/// order on the calling thread; at most `2 * threads` chunks are in flight.
fn run_pipeline(
    tasks: &[Task],
    options: &WriteOptions,
    mut sink: impl FnMut(usize, &Done) -> Result<()>,
) -> Result<(), PipelineError> {
    let total: usize = tasks.iter().map(|t| t.data.len()).sum();
    let threads = options.threads.clamp(1, tasks.len().max(1));
    // Threads pay off only for large captures.
    if threads == 1 || total < (4 << 20) {
        let (mut c, mut buf) = (Worker::default(), Vec::new());
        for (i, t) in tasks.iter().enumerate() {
            let done = compress(&mut c, options.level, options.chunk_size as u64, t, buf)
                .map_err(PipelineError::Compress)?;
            sink(i, &done).map_err(PipelineError::Sink)?;
            buf = done.compressed;
        }
        return Ok(());
    }
    let window = 2 * threads;
    let shared = Mutex::new(Shared {
        next: 0,
        written: 0,
        done: BTreeMap::new(),
        free: Vec::new(),
        abort: false,
    });
    let cv = Condvar::new();
    let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut compressor = Worker::default();
                loop {
                    let i = {
                        let mut g = lock();
                        loop {
                            if g.abort || g.next >= tasks.len() {
                                return;
                            }
                            if g.next < g.written + window {
                                break;
                            }
                            g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
                        }
                        g.next += 1;
                        (g.next - 1, g.free.pop().unwrap_or_default())
                    };
                    let (i, buf) = i;
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        compress(
                            &mut compressor,
                            options.level,
                            options.chunk_size as u64,
                            &tasks[i],
                            buf,
                        )
                    }))
                    .unwrap_or_else(|_| Err("the compressor panicked".to_string()));
                    lock().done.insert(i, r);
                    cv.notify_all();
                }
            });
        }
        let result = (|| {
            for i in 0..tasks.len() {
                let r = {
                    let mut g = lock();
                    loop {
                        if let Some(r) = g.done.remove(&i) {
                            break r;
                        }
                        g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
                    }
                };
                let done = r.map_err(PipelineError::Compress)?;
                sink(i, &done).map_err(PipelineError::Sink)?;
                let mut g = lock();
                g.written = i + 1;
                g.free.push(done.compressed);
                drop(g);
                cv.notify_all();
            }
            Ok(())
        })();
        if result.is_err() {
            lock().abort = true;
            cv.notify_all();
        }
        result
    })
}
