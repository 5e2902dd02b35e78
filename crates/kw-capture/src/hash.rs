//! BLAKE3 of a buffer computed in parallel, chunk by chunk.
//!
//! Buffers are split into chunks of `chunk_size` bytes (a power of two, at least 1 KiB), each
//! chunk at an offset that is a multiple of `chunk_size`. Such a chunk is a complete subtree of
//! the BLAKE3 tree, so each thread computes its chunk's chaining value and the chaining values
//! are merged into the root: the result is exactly `blake3::hash(buffer)`, the same value
//! `b3sum` prints for the raw bytes.

use blake3::hazmat::{
    left_subtree_len, merge_subtrees_non_root, merge_subtrees_root, ChainingValue, HasherExt, Mode,
};

/// The digest of one chunk: its chaining value, or, when the buffer is a single chunk, the root
/// hash of the whole buffer.
pub(crate) type ChunkDigest = [u8; 32];

/// Digest of the chunk `data` starting `offset` bytes into a buffer of `total_len` bytes that is
/// split into chunks of `chunk_size` bytes.
pub(crate) fn chunk_digest(
    data: &[u8],
    offset: u64,
    total_len: u64,
    chunk_size: u64,
) -> ChunkDigest {
    if total_len <= chunk_size {
        return *blake3::hash(data).as_bytes();
    }
    let mut hasher = blake3::Hasher::new();
    hasher.set_input_offset(offset);
    hasher.update(data);
    hasher.finalize_non_root()
}

/// The BLAKE3 hash of a buffer of `total_len` bytes from the digests of its chunks, in order.
///
/// Returns `None` when the number of digests does not match `total_len` and `chunk_size`
/// (a bug or a corrupt table: callers turn it into an error).
pub(crate) fn combine(
    digests: &[ChunkDigest],
    total_len: u64,
    chunk_size: u64,
) -> Option<blake3::Hash> {
    if chunk_size < blake3::CHUNK_LEN as u64 || !chunk_size.is_power_of_two() {
        return None;
    }
    let expected = total_len.div_ceil(chunk_size);
    if digests.len() as u64 != expected {
        return None;
    }
    match digests {
        [] => Some(blake3::hash(&[])),
        [single] => Some(blake3::Hash::from_bytes(*single)),
        _ => {
            let (left, right) = split(digests, total_len, chunk_size)?;
            Some(merge_subtrees_root(&left, &right, Mode::Hash))
        }
    }
}

/// Chaining values of the left and right subtrees of a (sub)tree of `len` bytes made of `cvs`.
fn split(
    cvs: &[ChainingValue],
    len: u64,
    chunk_size: u64,
) -> Option<(ChainingValue, ChainingValue)> {
    let left_len = left_subtree_len(len);
    let n_left = usize::try_from(left_len / chunk_size).ok()?;
    if n_left == 0 || n_left >= cvs.len() {
        return None;
    }
    let left = subtree(&cvs[..n_left], left_len, chunk_size)?;
    let right = subtree(&cvs[n_left..], len - left_len, chunk_size)?;
    Some((left, right))
}

fn subtree(cvs: &[ChainingValue], len: u64, chunk_size: u64) -> Option<ChainingValue> {
    match cvs {
        [] => None,
        [single] => Some(*single),
        _ => {
            let (left, right) = split(cvs, len, chunk_size)?;
            Some(merge_subtrees_non_root(&left, &right, Mode::Hash))
        }
    }
}

#[cfg(test)]
/// BLAKE3 of `data` computed on up to `threads` threads (same value as `blake3::hash(data)`).
pub(crate) fn parallel_hash(data: &[u8], chunk_size: usize, threads: usize) -> blake3::Hash {
    let total = data.len() as u64;
    let chunks: Vec<&[u8]> = data.chunks(chunk_size.max(1)).collect();
    let threads = threads.clamp(1, chunks.len().max(1));
    let mut digests = vec![[0u8; 32]; chunks.len()];
    if threads == 1 {
        for (i, c) in chunks.iter().enumerate() {
            digests[i] = chunk_digest(c, (i * chunk_size) as u64, total, chunk_size as u64);
        }
    } else {
        std::thread::scope(|s| {
            let mut slots: Vec<Vec<(usize, &mut ChunkDigest)>> =
                (0..threads).map(|_| Vec::new()).collect();
            for (i, d) in digests.iter_mut().enumerate() {
                slots[i % threads].push((i, d));
            }
            for slot in slots {
                let chunks = &chunks;
                s.spawn(move || {
                    for (i, d) in slot {
                        *d = chunk_digest(
                            chunks[i],
                            (i * chunk_size) as u64,
                            total,
                            chunk_size as u64,
                        );
                    }
                });
            }
        });
    }
    combine(&digests, total, chunk_size as u64).unwrap_or_else(|| blake3::hash(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_plain_blake3() {
        let data: Vec<u8> = (0..(5 * 4096 + 123))
            .map(|i| (i * 7 + i / 13) as u8)
            .collect();
        for &chunk in &[1024usize, 2048, 4096, 1 << 20] {
            for &len in &[
                0usize,
                1,
                1023,
                1024,
                1025,
                4096,
                4097,
                8192,
                12288,
                data.len(),
            ] {
                let slice = &data[..len];
                for threads in [1, 2, 3] {
                    assert_eq!(
                        parallel_hash(slice, chunk, threads),
                        blake3::hash(slice),
                        "len {len} chunk {chunk} threads {threads}"
                    );
                }
            }
        }
    }

    #[test]
    fn combine_rejects_wrong_counts() {
        assert!(combine(&[[0; 32]], 5000, 1024).is_none());
        assert!(combine(&[[0; 32]; 3], 1000, 1024).is_none());
        assert!(combine(&[[0; 32]; 2], 2048, 1000).is_none());
    }
}
