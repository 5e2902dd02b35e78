//! The on-disk layout of a capture file (see `FORMAT.md` in this crate).
//!
//! ```text
//! offset            size  field
//! 0                 8     magic  b"KWCAPTUR"
//! 8                 4     format version, u32 little-endian (currently 1)
//! 12                4     flags, u32 little-endian (0; any other value is rejected)
//! 16                8     header offset H, u64 little-endian
//! 24                8     header length L, u64 little-endian
//! 32                32    BLAKE3 of the header JSON bytes
//! 64                ...   compressed chunks (zstd frames), referenced by the header
//! H                 L     header: UTF-8 JSON (metadata + buffer and frame tables)
//! H+L               8     end magic b"KWCAPEND"; the file ends here (length = H + L + 8)
//! ```
//!
//! The fixed prefix at the start says where the header is; the header sits after the frames so
//! that a writer can stream compressed chunks to disk as they come out of the compressors, then
//! append the header and finally fill in the prefix (magic last). Because the header's hash is
//! in the prefix and the header holds the BLAKE3 of every compressed chunk and of every raw
//! buffer, one hash chain protects every byte of the file.

use serde::{Deserialize, Serialize};

/// The magic bytes every capture file starts with.
pub const MAGIC: [u8; 8] = *b"KWCAPTUR";
/// The magic bytes every capture file ends with.
pub const END_MAGIC: [u8; 8] = *b"KWCAPEND";
/// The format version this library writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Length of the fixed prefix; the first chunk starts here.
pub const PREFIX_LEN: usize = 64;
/// Length of the end magic.
pub const TRAILER_LEN: usize = 8;
/// File name extension of capture files (without the dot).
pub const EXTENSION: &str = "kwcap";
/// The `format` string in every header.
pub const FORMAT_NAME: &str = "kw-capture";

/// The fixed-size prefix of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prefix {
    pub version: u32,
    pub flags: u32,
    pub header_offset: u64,
    pub header_len: u64,
    pub header_hash: [u8; 32],
}

impl Prefix {
    pub(crate) fn encode(&self) -> [u8; PREFIX_LEN] {
        let mut out = [0u8; PREFIX_LEN];
        out[0..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        out[12..16].copy_from_slice(&self.flags.to_le_bytes());
        out[16..24].copy_from_slice(&self.header_offset.to_le_bytes());
        out[24..32].copy_from_slice(&self.header_len.to_le_bytes());
        out[32..64].copy_from_slice(&self.header_hash);
        out
    }

    /// Decodes the fields after the magic (the caller has checked the magic and the length).
    pub(crate) fn decode(bytes: &[u8; PREFIX_LEN]) -> Prefix {
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[o..o + 8]);
            u64::from_le_bytes(b)
        };
        let mut header_hash = [0u8; 32];
        header_hash.copy_from_slice(&bytes[32..64]);
        Prefix {
            version: u32_at(8),
            flags: u32_at(12),
            header_offset: u64_at(16),
            header_len: u64_at(24),
            header_hash,
        }
    }
}

/// The JSON header of a capture file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// Same as the prefix's version.
    pub version: u32,
    /// The library that wrote the file, e.g. `kw-capture 0.1.0`.
    pub writer: String,
    /// Compression codec and level, e.g. `{"codec": "zstd", "level": 1}`.
    pub compression: Compression,
    /// Raw bytes per chunk (a power of two, at least 1024): every chunk of a frame but the last
    /// holds exactly this many raw bytes.
    pub chunk_size: u64,
    /// The caller's metadata, stored as given.
    pub metadata: serde_json::Value,
    /// The buffers, in the order they were given.
    pub buffers: Vec<BufferEntry>,
    /// The stored frames (one per distinct buffer content).
    pub frames: Vec<FrameEntry>,
}

/// Codec settings recorded in the header.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Compression {
    /// Always `zstd` in version 1.
    pub codec: String,
    /// The zstd level used.
    pub level: i32,
}

/// One named buffer: its element type and the frame that holds its bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BufferEntry {
    /// The buffer's name (unique within the file).
    pub name: String,
    /// Element type, e.g. `f32`, `i64`, `u8` (free text, for readers).
    pub elem_type: String,
    /// Raw length in bytes (equals the frame's).
    pub raw_len: u64,
    /// Index into [`Header::frames`]; several buffers with identical contents share one frame.
    pub frame: usize,
}

/// One stored buffer content, split into independently compressed chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameEntry {
    /// Raw (decompressed) length in bytes.
    pub raw_len: u64,
    /// Sum of the chunks' compressed lengths.
    pub compressed_len: u64,
    /// BLAKE3 of the raw bytes, hex (the same value `b3sum` prints for them).
    pub blake3: String,
    /// The filter applied to each chunk's raw bytes before compression (`shuffle2`,
    /// `shuffle4`, `shuffle8`: byte `k` of every element grouped together); absent: none.
    /// Checksums always cover the unfiltered bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// The chunks, in order.
    pub chunks: Vec<ChunkEntry>,
}

/// One chunk: a zstd frame at `offset` in the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkEntry {
    /// Byte offset of the compressed chunk in the file.
    pub offset: u64,
    /// Length of the compressed chunk in bytes.
    pub compressed_len: u64,
    /// Raw length of the chunk in bytes.
    pub raw_len: u64,
    /// BLAKE3 of the compressed bytes, hex.
    pub blake3: String,
}
