//! Parsing and checking the prefix, the header and the frame table of a capture file.

use crate::error::{CaptureError, Result};
use crate::filter::parse_filter;
use crate::format::{
    Header, Prefix, END_MAGIC, FORMAT_NAME, FORMAT_VERSION, MAGIC, PREFIX_LEN, TRAILER_LEN,
};
use std::collections::HashSet;
use std::path::Path;

/// The parsed checksums of one frame.
#[derive(Debug, Clone)]
pub(crate) struct FrameHashes {
    pub raw: blake3::Hash,
    pub chunks: Vec<blake3::Hash>,
    /// The shuffle width of the frame's filter (`None`: no filter).
    pub shuffle: Option<usize>,
}

/// A header whose every offset, length and checksum string has been checked.
#[derive(Debug)]
pub(crate) struct Checked {
    pub header: Header,
    pub hashes: Vec<FrameHashes>,
}

/// Parses and checks everything but the frame contents.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Checked> {
    let n = bytes.len();
    let truncated = |detail: String| CaptureError::Truncated {
        path: path.to_path_buf(),
        detail,
    };
    let bad = |detail: String| CaptureError::BadHeader {
        path: path.to_path_buf(),
        detail,
    };
    let m = n.min(MAGIC.len());
    if bytes[..m] != MAGIC[..m] {
        return Err(CaptureError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if n < 12 {
        return Err(truncated(format!(
            "{n} bytes, shorter than the {PREFIX_LEN}-byte prefix"
        )));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != FORMAT_VERSION {
        return Err(CaptureError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if n < PREFIX_LEN + TRAILER_LEN {
        return Err(truncated(format!(
            "{n} bytes, shorter than the {PREFIX_LEN}-byte prefix and the {TRAILER_LEN}-byte end magic"
        )));
    }
    let mut raw_prefix = [0u8; PREFIX_LEN];
    raw_prefix.copy_from_slice(&bytes[..PREFIX_LEN]);
    let prefix = Prefix::decode(&raw_prefix);
    if prefix.flags != 0 {
        return Err(bad(format!(
            "unknown flags {:#x} in the prefix",
            prefix.flags
        )));
    }
    if prefix.header_offset < PREFIX_LEN as u64 {
        return Err(bad(format!(
            "header offset {} lies inside the prefix",
            prefix.header_offset
        )));
    }
    let end = prefix
        .header_offset
        .checked_add(prefix.header_len)
        .and_then(|e| e.checked_add(TRAILER_LEN as u64))
        .ok_or_else(|| bad("header offset + length overflows".to_string()))?;
    if end > n as u64 {
        return Err(truncated(format!(
            "the layout needs {end} bytes but the file has {n}"
        )));
    }
    if end < n as u64 {
        return Err(bad(format!(
            "the layout ends at byte {end} but the file has {n} bytes (trailing garbage or a corrupt prefix)"
        )));
    }
    // All three values are now <= n, so they fit in usize.
    let (h0, h1) = (
        prefix.header_offset as usize,
        (prefix.header_offset + prefix.header_len) as usize,
    );
    if bytes[h1..] != END_MAGIC {
        return Err(bad("end magic missing".to_string()));
    }
    let json = &bytes[h0..h1];
    if blake3::hash(json) != blake3::Hash::from_bytes(prefix.header_hash) {
        return Err(CaptureError::ChecksumMismatch {
            path: path.to_path_buf(),
            what: format!("header ({} bytes at offset {h0})", json.len()),
        });
    }
    let text = std::str::from_utf8(json)
        .map_err(|e| bad(format!("header is not valid capture JSON: {e}")))?;
    kw_core::json_keys::check_unique_keys(text)
        .map_err(|e| bad(format!("header is not valid capture JSON: {e}")))?;
    let header: Header = serde_json::from_str(text)
        .map_err(|e| bad(format!("header is not valid capture JSON: {e}")))?;
    let hashes = check_tables(&header, prefix.header_offset).map_err(bad)?;
    Ok(Checked { header, hashes })
}

fn parse_hash(text: &str, what: &dyn Fn() -> String) -> Result<blake3::Hash, String> {
    blake3::Hash::from_hex(text).map_err(|e| format!("{}: bad BLAKE3 hex `{text}`: {e}", what()))
}

/// Checks the buffer and frame tables against each other and against the frame area
/// `PREFIX_LEN..frames_end`.
fn check_tables(h: &Header, frames_end: u64) -> Result<Vec<FrameHashes>, String> {
    if h.format != FORMAT_NAME {
        return Err(format!(
            "format is `{}`, expected `{FORMAT_NAME}`",
            h.format
        ));
    }
    if h.version != FORMAT_VERSION {
        return Err(format!(
            "header says version {} but the prefix says {FORMAT_VERSION}",
            h.version
        ));
    }
    if h.compression.codec != "zstd" {
        return Err(format!("unknown codec `{}`", h.compression.codec));
    }
    let cs = h.chunk_size;
    if !cs.is_power_of_two() || !(1024..=1 << 30).contains(&cs) {
        return Err(format!(
            "chunk size {cs} is not a power of two from 1024 to 2^30"
        ));
    }
    let mut extents = Vec::new();
    let mut hashes = Vec::with_capacity(h.frames.len());
    for (f, frame) in h.frames.iter().enumerate() {
        let expected_chunks = frame.raw_len.div_ceil(cs);
        if frame.chunks.len() as u64 != expected_chunks {
            return Err(format!(
                "frame {f}: {} chunks for {} raw bytes (expected {expected_chunks})",
                frame.chunks.len(),
                frame.raw_len
            ));
        }
        let mut compressed = 0u64;
        let mut chunk_hashes = Vec::with_capacity(frame.chunks.len());
        for (k, c) in frame.chunks.iter().enumerate() {
            let want = if k + 1 < frame.chunks.len() {
                cs
            } else {
                frame.raw_len - cs * k as u64
            };
            if c.raw_len != want {
                return Err(format!(
                    "frame {f} chunk {k}: raw length {} (expected {want})",
                    c.raw_len
                ));
            }
            let end = c.offset.checked_add(c.compressed_len);
            if c.offset < PREFIX_LEN as u64 || end.is_none_or(|e| e > frames_end) {
                return Err(format!(
                    "frame {f} chunk {k}: bytes {}+{} lie outside the frame area {PREFIX_LEN}..{frames_end}",
                    c.offset, c.compressed_len
                ));
            }
            compressed = compressed.saturating_add(c.compressed_len);
            extents.push((c.offset, c.compressed_len));
            chunk_hashes.push(parse_hash(&c.blake3, &|| format!("frame {f} chunk {k}"))?);
        }
        if compressed != frame.compressed_len {
            return Err(format!(
                "frame {f}: compressed length {} but its chunks add up to {compressed}",
                frame.compressed_len
            ));
        }
        let shuffle = match &frame.filter {
            None => None,
            Some(name) => Some(parse_filter(name).map_err(|e| format!("frame {f}: {e}"))?),
        };
        hashes.push(FrameHashes {
            raw: parse_hash(&frame.blake3, &|| format!("frame {f}"))?,
            chunks: chunk_hashes,
            shuffle,
        });
    }
    extents.sort_unstable();
    for w in extents.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(format!(
                "chunks at offsets {} and {} overlap",
                w[0].0, w[1].0
            ));
        }
    }
    let mut names = HashSet::new();
    for b in &h.buffers {
        if !names.insert(b.name.as_str()) {
            return Err(format!("two buffers are named `{}`", b.name));
        }
        let frame = h.frames.get(b.frame).ok_or_else(|| {
            format!(
                "buffer `{}` refers to frame {} of {}",
                b.name,
                b.frame,
                h.frames.len()
            )
        })?;
        if frame.raw_len != b.raw_len {
            return Err(format!(
                "buffer `{}` has {} bytes but its frame {} has {}",
                b.name, b.raw_len, b.frame, frame.raw_len
            ));
        }
    }
    Ok(hashes)
}
