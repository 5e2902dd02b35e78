//! The on-disk format of one cache entry (version 1):
//!
//! ```text
//! magic      8 bytes  "KWCACHE\n"
//! version    u32 LE   1
//! header_len u32 LE   H
//! payload_len u64 LE  P
//! header     H bytes  JSON (EntryHeader: key, backend, kernel, device, kind, symbol, ...)
//! payload    P bytes  the binary (CUDA cubin or PTX, OpenCL program binary)
//! checksum   32 bytes BLAKE3 of everything before it
//! ```
//!
//! An entry is trusted only when the magic, version, lengths, checksum and key all match:
//! anything else (truncated by a crash, corrupted, written by another format or for another
//! key) is rejected with the reason, and the caller recompiles and replaces it.

use super::key::CacheKey;
use serde::{Deserialize, Serialize};

/// The first bytes of every entry.
pub const MAGIC: &[u8; 8] = b"KWCACHE\n";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const FIXED: usize = 8 + 4 + 4 + 8;
const CHECKSUM: usize = 32;
/// Headers longer than this are not headers (a corrupt length).
const MAX_HEADER: usize = 1 << 20;

/// What an entry says about itself (JSON in the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryHeader {
    /// The key, in hex: must equal the file's name and the key looked up.
    pub key: String,
    /// `cuda` or `opencl`.
    pub backend: String,
    /// The kernel name.
    pub kernel: String,
    /// The device it was compiled for (name and architecture).
    pub device: String,
    /// `cubin`, `ptx` or `opencl-binary`.
    pub kind: String,
    /// The name to look the kernel up by in the binary (mangled for C++ kernels).
    pub symbol: String,
    /// The compiler options used (for information).
    #[serde(default)]
    pub options: String,
    /// When it was written (seconds since the Unix epoch).
    pub created: u64,
    /// What else the backend needs to use the binary (e.g. OpenCL parameter address spaces).
    #[serde(default)]
    pub extra: String,
}

/// A compiled binary as the backend hands it to the cache, and gets it back on a hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub header: EntryHeader,
    /// The binary.
    pub payload: Vec<u8>,
}

/// Serialises an entry.
pub fn encode(entry: &Entry) -> Vec<u8> {
    let header = serde_json::to_vec(&entry.header).expect("an entry header serialises");
    let mut out = Vec::with_capacity(FIXED + header.len() + entry.payload.len() + CHECKSUM);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&(entry.payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&entry.payload);
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}

/// The fixed part: the header length and the payload length, after checking magic and version.
fn lengths(bytes: &[u8]) -> Result<(usize, u64), String> {
    if bytes.len() < FIXED {
        return Err(format!(
            "truncated: {} bytes, shorter than the fixed header",
            bytes.len()
        ));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a kernel-wisdom cache entry (wrong magic)".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(format!(
            "format version {version} (this build reads {FORMAT_VERSION})"
        ));
    }
    let h = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let p = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    if h > MAX_HEADER {
        return Err(format!("header length {h} is not plausible"));
    }
    Ok((h, p))
}

/// Reads only the header (for listings); checks no checksum.
pub fn decode_header(bytes: &[u8]) -> Result<EntryHeader, String> {
    let (h, _) = lengths(bytes)?;
    let end = FIXED + h;
    if bytes.len() < end {
        return Err("truncated inside the header".into());
    }
    serde_json::from_slice(&bytes[FIXED..end]).map_err(|e| format!("bad header: {e}"))
}

/// Parses and checks an entry that must be for `key` (`None`: any key, as listings do).
pub fn decode(bytes: &[u8], key: Option<&CacheKey>) -> Result<Entry, String> {
    let (h, p) = lengths(bytes)?;
    let expected = usize::try_from(p)
        .ok()
        .and_then(|p| (FIXED + h).checked_add(p)?.checked_add(CHECKSUM));
    match expected {
        Some(n) if n == bytes.len() => {}
        Some(n) if n > bytes.len() => {
            return Err(format!("truncated: {} of {n} bytes", bytes.len()));
        }
        Some(n) => return Err(format!("{} bytes where {n} were expected", bytes.len())),
        None => return Err(format!("payload length {p} is not plausible")),
    }
    let body = bytes.len() - CHECKSUM;
    if blake3::hash(&bytes[..body]).as_bytes() != &bytes[body..] {
        return Err("checksum mismatch (corrupted)".into());
    }
    let header: EntryHeader =
        serde_json::from_slice(&bytes[FIXED..FIXED + h]).map_err(|e| format!("bad header: {e}"))?;
    if let Some(k) = key {
        if header.key != k.hex() {
            return Err(format!(
                "foreign entry: written for key {}, looked up as {}",
                header.key,
                k.hex()
            ));
        }
    }
    Ok(Entry {
        header,
        payload: bytes[FIXED + h..body].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(key: &CacheKey, payload: &[u8]) -> Entry {
        Entry {
            header: EntryHeader {
                key: key.hex(),
                backend: "opencl".into(),
                kernel: "k".into(),
                device: "dev".into(),
                kind: "opencl-binary".into(),
                symbol: "k".into(),
                options: "-DX=1".into(),
                created: 1,
                extra: String::new(),
            },
            payload: payload.to_vec(),
        }
    }

    #[test]
    fn round_trip_and_every_damage_is_rejected() {
        let key = CacheKey::from_hex(&"ab".repeat(32)).unwrap();
        let other = CacheKey::from_hex(&"cd".repeat(32)).unwrap();
        let e = sample(&key, b"binary bytes");
        let bytes = encode(&e);
        assert_eq!(decode(&bytes, Some(&key)).unwrap(), e);
        assert_eq!(decode_header(&bytes).unwrap(), e.header);
        // Truncated anywhere.
        for cut in [0, 5, FIXED, FIXED + 3, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], Some(&key)).is_err(), "cut at {cut}");
        }
        // Any flipped byte.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&b, Some(&key)).is_err(), "byte {i} flipped");
        }
        // Trailing garbage.
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode(&long, Some(&key)).is_err());
        // A valid entry of another key.
        let err = decode(&bytes, Some(&other)).unwrap_err();
        assert!(err.contains("foreign"), "{err}");
        // Another format version.
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert!(decode(&v2, Some(&key)).unwrap_err().contains("version 2"));
    }
}
