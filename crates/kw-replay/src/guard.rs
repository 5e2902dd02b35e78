//! Guard regions: every buffer a replay uploads is allocated [`GUARD_BYTES`] longer than its
//! captured length, and the bytes past its end hold a known pattern. After a configuration's
//! runs, the guards are read back (a few KiB per buffer): a changed byte is an out-of-bounds
//! write, a failed evaluation that names the buffer and the offset, even when the output is
//! right. After any failed evaluation every buffer is restored (written buffers from their
//! pristine copies, read-only inputs from the capture, guards rewritten), so no configuration
//! is judged on another's damage.
//!
//! What is caught: writes past a buffer's end, up to [`GUARD_BYTES`] bytes beyond it (where
//! kernels without bounds checks write: the next row, the next tile). Writes before a
//! buffer's start, or farther past its end, are not caught by the guard; the restore after
//! a failure still keeps them from poisoning later evaluations when they land in the
//! session's own buffers.

use kw_core::backend::{BackendError, DeviceMemory};

/// Bytes of guard after every buffer.
pub const GUARD_BYTES: usize = 16 * 1024;

/// The guard's byte at position `i` (not a constant, so that a kernel writing one repeated
/// value cannot match it by chance).
fn pattern_byte(i: usize) -> u8 {
    (0xA5 ^ (i.wrapping_mul(31) & 0xFF)) as u8
}

fn pattern() -> Vec<u8> {
    (0..GUARD_BYTES).map(pattern_byte).collect()
}

/// Writes the guard pattern after the first `data_bytes` bytes of `mem`.
pub fn fill(mem: &dyn DeviceMemory, data_bytes: usize) -> Result<(), BackendError> {
    mem.write(data_bytes, &pattern())
}

/// The offset (from the buffer's start, in bytes) of the first guard byte that changed, if
/// any.
pub fn first_change(
    mem: &dyn DeviceMemory,
    data_bytes: usize,
) -> Result<Option<usize>, BackendError> {
    let mut got = vec![0u8; GUARD_BYTES];
    mem.read(data_bytes, &mut got)?;
    Ok(got
        .iter()
        .enumerate()
        .find(|(i, b)| **b != pattern_byte(*i))
        .map(|(i, _)| data_bytes + i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_not_one_repeated_byte() {
        let p = pattern();
        assert_eq!(p.len(), GUARD_BYTES);
        assert!(p.iter().any(|&b| b != p[0]));
        assert!(!p.windows(4).all(|w| w == [0, 0, 0, 0]));
    }
}
