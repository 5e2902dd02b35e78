//! Decompressing and checking one frame, its chunks spread over threads.

use crate::error::{CaptureError, Result};
use crate::filter::unshuffle;
use crate::format::FrameEntry;
use crate::hash::{chunk_digest, combine, ChunkDigest};
use crate::validate::FrameHashes;
use std::path::Path;

/// A chunk index and where its bytes go (None: scratch space).
type ChunkJob<'a> = (usize, Option<&'a mut [u8]>);

/// Frames smaller than this are decoded on the calling thread.
const PARALLEL_MIN_BYTES: u64 = 4 << 20;

/// Checks and decompresses every chunk of `frame` from `file` (whose tables were validated,
/// and whose chunks' sizes [`check_stated_sizes`] checked before the room was made),
/// into `out` (exactly the frame's raw length) or, with `None`, into scratch space. `label`
/// names the buffer(s) in errors.
pub(crate) fn decode_frame(
    path: &Path,
    label: &str,
    file: &[u8],
    chunk_size: u64,
    frame: &FrameEntry,
    hashes: &FrameHashes,
    out: Option<&mut [u8]>,
) -> Result<()> {
    let n = frame.chunks.len();
    let mut outs: Vec<Option<&mut [u8]>> = match out {
        Some(o) => o.chunks_mut(chunk_size as usize).map(Some).collect(),
        None => (0..n).map(|_| None).collect(),
    };
    if outs.len() != n {
        return Err(CaptureError::Decompress {
            path: path.to_path_buf(),
            buffer: label.to_string(),
            detail: format!(
                "output has room for {} chunks, the frame has {n}",
                outs.len()
            ),
        });
    }
    // Threads pay off only for large frames.
    let threads = if frame.raw_len < PARALLEL_MIN_BYTES {
        1
    } else {
        crate::options::cpu_count().clamp(1, n.max(1))
    };
    let work = |k: usize, dst: Option<&mut [u8]>, scratch: &mut Scratch| {
        decode_chunk(
            path, label, file, chunk_size, frame, hashes, k, dst, scratch,
        )
    };
    let mut results: Vec<(usize, Result<ChunkDigest>)> = Vec::with_capacity(n);
    if threads <= 1 {
        let mut scratch = Scratch::default();
        for (k, dst) in outs.drain(..).enumerate() {
            results.push((k, work(k, dst, &mut scratch)));
        }
    } else {
        let mut per_thread: Vec<Vec<ChunkJob>> = (0..threads).map(|_| Vec::new()).collect();
        for (k, dst) in outs.drain(..).enumerate() {
            per_thread[k % threads].push((k, dst));
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = per_thread
                .into_iter()
                .map(|jobs| {
                    let work = &work;
                    s.spawn(move || {
                        let mut scratch = Scratch::default();
                        jobs.into_iter()
                            .map(|(k, dst)| (k, work(k, dst, &mut scratch)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                match h.join() {
                    Ok(r) => results.extend(r),
                    Err(_) => results.push((
                        n,
                        Err(CaptureError::Decompress {
                            path: path.to_path_buf(),
                            buffer: label.to_string(),
                            detail: "a decompression thread panicked".to_string(),
                        }),
                    )),
                }
            }
        });
    }
    results.sort_by_key(|(k, _)| *k);
    let mut digests = Vec::with_capacity(n);
    for (_, r) in results {
        digests.push(r?);
    }
    let ok = combine(&digests, frame.raw_len, chunk_size).is_some_and(|h| h == hashes.raw);
    if !ok {
        return Err(CaptureError::ChecksumMismatch {
            path: path.to_path_buf(),
            what: format!("contents of buffer `{label}` ({} raw bytes)", frame.raw_len),
        });
    }
    Ok(())
}

/// The most raw bytes one compressed byte of zstd can stand for: a block of at most 128 KiB
/// takes at least 4 bytes (a run of one byte), so no frame decompresses to more than this
/// many times its length.
pub(crate) const MAX_EXPANSION: u64 = 32 * 1024;

/// Checks that a compressed chunk's zstd frame states `raw_len` as its size (every kw
/// writer's frame states it) and that its bytes could hold that much ([`MAX_EXPANSION`]):
/// what a header declares is checked against the frames before any memory is set aside
/// for it, so that a header (and a frame header) declaring gigabytes over frames of a few
/// bytes costs nothing.
fn stated_size(src: &[u8], raw_len: u64) -> std::result::Result<(), String> {
    if raw_len > (src.len() as u64).saturating_mul(MAX_EXPANSION) {
        return Err(format!(
            "{} compressed bytes cannot hold the {raw_len} the header says",
            src.len()
        ));
    }
    match zstd::zstd_safe::get_frame_content_size(src) {
        Ok(Some(n)) if n == raw_len => Ok(()),
        Ok(Some(n)) => Err(format!(
            "its zstd frame holds {n} bytes, the header says {raw_len}"
        )),
        Ok(None) => Err("its zstd frame does not state its size (a kw writer's does)".into()),
        Err(_) => Err("not a zstd frame".into()),
    }
}

/// [`stated_size`] for every chunk of `frame` (before its buffer is allocated). A chunk
/// that fails it and whose checksum fails too is reported as damaged (as decoding reports
/// it), not as a size that disagrees.
pub(crate) fn check_stated_sizes(
    path: &Path,
    label: &str,
    file: &[u8],
    frame: &FrameEntry,
    hashes: &FrameHashes,
) -> Result<()> {
    for (k, c) in frame.chunks.iter().enumerate() {
        let src = usize::try_from(c.offset)
            .ok()
            .zip(usize::try_from(c.offset + c.compressed_len).ok())
            .and_then(|(a, b)| file.get(a..b));
        let why = match src {
            Some(src) => stated_size(src, c.raw_len).err(),
            None => Some("lies outside the file".to_string()),
        };
        if let Some(why) = why {
            if src.is_some_and(|src| hashes.chunks.get(k) != Some(&blake3::hash(src))) {
                return Err(CaptureError::ChecksumMismatch {
                    path: path.to_path_buf(),
                    what: format!(
                        "buffer `{label}` chunk {k} ({} compressed bytes at offset {})",
                        c.compressed_len, c.offset
                    ),
                });
            }
            return Err(CaptureError::Decompress {
                path: path.to_path_buf(),
                buffer: label.to_string(),
                detail: format!("chunk {k}: {why}"),
            });
        }
    }
    Ok(())
}

/// Per-thread decoding state.
#[derive(Default)]
struct Scratch {
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    /// Decompressed bytes of a filtered chunk (before unshuffling).
    filtered: Vec<u8>,
    /// Raw bytes when the caller keeps none (`verify`).
    raw: Vec<u8>,
}

#[allow(clippy::too_many_arguments)]
fn decode_chunk(
    path: &Path,
    label: &str,
    file: &[u8],
    chunk_size: u64,
    frame: &FrameEntry,
    hashes: &FrameHashes,
    k: usize,
    dst: Option<&mut [u8]>,
    scratch: &mut Scratch,
) -> Result<ChunkDigest> {
    let err = |detail: String| CaptureError::Decompress {
        path: path.to_path_buf(),
        buffer: label.to_string(),
        detail,
    };
    let c = &frame.chunks[k];
    // Offsets were checked against the file length on open.
    let src = usize::try_from(c.offset)
        .ok()
        .zip(usize::try_from(c.offset + c.compressed_len).ok())
        .and_then(|(a, b)| file.get(a..b))
        .ok_or_else(|| err(format!("chunk {k} lies outside the file")))?;
    if blake3::hash(src) != hashes.chunks[k] {
        return Err(CaptureError::ChecksumMismatch {
            path: path.to_path_buf(),
            what: format!(
                "buffer `{label}` chunk {k} ({} compressed bytes at offset {})",
                c.compressed_len, c.offset
            ),
        });
    }
    let raw_len = c.raw_len as usize;
    let Scratch {
        decompressor,
        filtered,
        raw,
    } = scratch;
    let dst: &mut [u8] = match dst {
        Some(d) => d,
        None => {
            raw.resize(raw_len, 0);
            raw
        }
    };
    if dst.len() != raw_len {
        return Err(err(format!(
            "chunk {k}: room for {} bytes, the chunk has {raw_len}",
            dst.len()
        )));
    }
    let d = match decompressor {
        Some(d) => d,
        None => {
            decompressor.insert(zstd::bulk::Decompressor::new().map_err(|e| err(e.to_string()))?)
        }
    };
    let target: &mut [u8] = match hashes.shuffle {
        Some(_) => {
            filtered.resize(raw_len, 0);
            filtered
        }
        None => dst,
    };
    let got = d
        .decompress_to_buffer(src, &mut *target)
        .map_err(|e| err(format!("chunk {k}: {e}")))?;
    if got != raw_len {
        return Err(err(format!(
            "chunk {k}: decompressed to {got} bytes, expected {raw_len}"
        )));
    }
    if let Some(width) = hashes.shuffle {
        unshuffle(filtered, width, dst);
    }
    Ok(chunk_digest(
        dst,
        k as u64 * chunk_size,
        frame.raw_len,
        chunk_size,
    ))
}
