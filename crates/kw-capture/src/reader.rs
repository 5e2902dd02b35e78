//! Reading a capture file: memory-mapped, validated on open, buffers decompressed on demand.

use crate::decode::decode_frame;
use crate::error::{CaptureError, Result};
use crate::format::{Header, PREFIX_LEN, TRAILER_LEN};
use crate::validate::{parse, FrameHashes};
use memmap2::Mmap;
use serde::de::DeserializeOwned;

use std::io::Read;
use std::path::{Path, PathBuf};

enum Backing {
    Map(Mmap),
    Bytes(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Bytes(b) => b,
        }
    }
}

/// Sizes and types of one buffer of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferInfo<'a> {
    /// The buffer's name.
    pub name: &'a str,
    /// Its element type (free text, e.g. `f32`).
    pub elem_type: &'a str,
    /// Raw length in bytes.
    pub raw_len: u64,
    /// Compressed length of its frame in bytes.
    pub compressed_len: u64,
    /// Index of the frame that stores it.
    pub frame: usize,
    /// Whether another buffer shares the frame (identical contents stored once).
    pub shared: bool,
}

/// What [`Capture::verify`] checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifySummary {
    /// Frames checked.
    pub frames: usize,
    /// Chunks checked.
    pub chunks: usize,
    /// Raw bytes decompressed and hashed.
    pub raw_bytes: u64,
}

/// An open capture file.
///
/// [`open`](Self::open) checks the magic bytes, the version, the header's checksum and JSON, and
/// that every chunk lies inside the file; [`read_buffer`](Self::read_buffer) checks the
/// checksums of the chunks it reads and of the decompressed bytes, so it never returns wrong
/// data silently; [`verify`](Self::verify) checks every checksum of the file.
pub struct Capture {
    path: PathBuf,
    backing: Backing,
    header: Header,
    hashes: Vec<FrameHashes>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("path", &self.path)
            .field("file_len", &self.file_len())
            .field("buffers", &self.header.buffers.len())
            .finish()
    }
}

impl Capture {
    /// Opens and checks a capture file (memory-mapped).
    pub fn open(path: impl AsRef<Path>) -> Result<Capture> {
        let path = path.as_ref().to_path_buf();
        // A regular file only, opened without blocking (a FIFO is refused, never waited on).
        let rules = kw_core::files::ReadRules::new("capture", kw_core::files::caps::CAPTURE);
        let (file, meta) = kw_core::files::open_regular(&path, rules)
            .map_err(|e| CaptureError::io(&path, "opening", e.into_io()))?;
        if meta.len() < (PREFIX_LEN + TRAILER_LEN) as u64 {
            // Too short to be valid; read it to say why (bad magic or truncated).
            let mut bytes = Vec::new();
            (&file)
                .take((PREFIX_LEN + TRAILER_LEN) as u64)
                .read_to_end(&mut bytes)
                .map_err(|e| CaptureError::io(&path, "reading", e))?;
            return Capture::from_bytes(path, bytes);
        }
        // SAFETY: the map is only read. Capture files are written under a temporary name and
        // renamed into place, never modified afterwards; if another process truncates or rewrites
        // one while it is mapped, reads may see changed bytes (caught by the checksums) or fault,
        // which is the documented limit of memory-mapped reading.
        let map = unsafe { Mmap::map(&file) }
            .map_err(|e| CaptureError::io(&path, "memory-mapping", e))?;
        Capture::from_backing(path, Backing::Map(map))
    }

    /// Checks a capture held in memory; `label` names it in errors.
    pub fn from_bytes(label: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Capture> {
        Capture::from_backing(label.into(), Backing::Bytes(bytes))
    }

    fn from_backing(path: PathBuf, backing: Backing) -> Result<Capture> {
        let checked = parse(&path, backing.bytes())?;
        Ok(Capture {
            path,
            backing,
            header: checked.header,
            hashes: checked.hashes,
        })
    }

    /// The file this capture was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole header: metadata, buffer table and frame table.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The caller's metadata, as stored.
    pub fn metadata(&self) -> &serde_json::Value {
        &self.header.metadata
    }

    /// The metadata deserialised into `T`.
    pub fn metadata_as<T: DeserializeOwned>(&self) -> Result<T> {
        T::deserialize(&self.header.metadata).map_err(|e| CaptureError::BadHeader {
            path: self.path.clone(),
            detail: format!("metadata does not have the expected shape: {e}"),
        })
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.backing.bytes().len() as u64
    }

    /// Sum of the raw lengths of all buffers (shared contents counted for each buffer).
    pub fn raw_len(&self) -> u64 {
        self.header.buffers.iter().map(|b| b.raw_len).sum()
    }

    /// Sum of the compressed lengths of all stored frames.
    pub fn compressed_len(&self) -> u64 {
        self.header.frames.iter().map(|f| f.compressed_len).sum()
    }

    /// The buffers, in the order they were written.
    pub fn buffers(&self) -> impl Iterator<Item = BufferInfo<'_>> + '_ {
        self.header.buffers.iter().map(|b| BufferInfo {
            name: &b.name,
            elem_type: &b.elem_type,
            raw_len: b.raw_len,
            compressed_len: self.header.frames[b.frame].compressed_len,
            frame: b.frame,
            shared: self
                .header
                .buffers
                .iter()
                .filter(|o| o.frame == b.frame)
                .count()
                > 1,
        })
    }

    /// Decompresses the buffer `name` into a new allocation of exactly its raw length, checking
    /// the checksum of every compressed chunk and of the decompressed bytes.
    pub fn read_buffer(&self, name: &str) -> Result<Vec<u8>> {
        let entry = self
            .header
            .buffers
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| CaptureError::UnknownBuffer {
                path: self.path.clone(),
                name: name.to_string(),
            })?;
        let len = entry.raw_len;
        let oom = || CaptureError::OutOfMemory {
            path: self.path.clone(),
            buffer: name.to_string(),
            len,
        };
        let n = usize::try_from(len).map_err(|_| oom())?;
        // What the header declares is checked against the frames before the room is made.
        self.check_sizes(entry.frame)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| oom())?;
        out.resize(n, 0);
        self.decode(entry.frame, Some(&mut out))?;
        Ok(out)
    }

    /// Checks every checksum: the header's (on open), each compressed chunk's, and each stored
    /// buffer's raw contents after decompression. Returns the first mismatch as an error.
    pub fn verify(&self) -> Result<VerifySummary> {
        let mut summary = VerifySummary::default();
        for (f, frame) in self.header.frames.iter().enumerate() {
            self.check_sizes(f)?;
            self.decode(f, None)?;
            summary.frames += 1;
            summary.chunks += frame.chunks.len();
            summary.raw_bytes += frame.raw_len;
        }
        Ok(summary)
    }

    /// The buffers stored in `frame`, as errors name them.
    fn label(&self, frame: usize) -> String {
        let names: Vec<&str> = self
            .header
            .buffers
            .iter()
            .filter(|b| b.frame == frame)
            .map(|b| b.name.as_str())
            .collect();
        if names.is_empty() {
            format!("frame {frame}")
        } else {
            names.join("`, `")
        }
    }

    /// Checks `frame`'s chunks against the lengths the header declares
    /// ([`crate::decode::check_stated_sizes`]): before any room is made for decoding it.
    fn check_sizes(&self, frame: usize) -> Result<()> {
        crate::decode::check_stated_sizes(
            &self.path,
            &self.label(frame),
            self.backing.bytes(),
            &self.header.frames[frame],
            &self.hashes[frame],
        )
    }

    /// Decodes `frame` (whose sizes [`Capture::check_sizes`] checked) into `out`, or only
    /// checks it with `None`.
    fn decode(&self, frame: usize, out: Option<&mut [u8]>) -> Result<()> {
        decode_frame(
            &self.path,
            &self.label(frame),
            self.backing.bytes(),
            self.header.chunk_size,
            &self.header.frames[frame],
            &self.hashes[frame],
            out,
        )
    }
}
