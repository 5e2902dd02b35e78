//! [`DeviceMemory`]: a block of a device's memory (transfers, copies, fills), and the range
//! check its implementations share.

use super::error::BackendError;
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes one host transfer may move in shared mode (0: no limit); see
/// [`set_gentle`].
static GENTLE_CHUNK: AtomicUsize = AtomicUsize::new(0);

/// Shared mode, for a process that tunes on a GPU an application is using (`kw tune
/// --max-share`, online tuning): a GPU runs one process's work at a time, so a long transfer
/// or a queue of back-to-back operations in the tuning process holds the application's next
/// kernel until the driver's time slice ends (about 2 ms). In shared mode, host transfers
/// are cut into pieces of at most `bytes` (device-to-device copies and fills into pieces 16
/// times larger), each waited for before the next is enqueued, and timed runs are waited
/// for one by one, so the device is never held longer than one piece or one run. `0` turns
/// it off (the default). `KW_GENTLE_CHUNK` (bytes) overrides the value set here.
pub fn set_gentle(bytes: usize) {
    GENTLE_CHUNK.store(bytes, Ordering::Relaxed);
}

/// The piece size of shared mode for host transfers (0: off); see [`set_gentle`].
/// `KW_GENTLE_CHUNK` is read once, at the first call.
pub fn gentle_chunk() -> usize {
    static FROM_ENV: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let from_env = FROM_ENV.get_or_init(|| {
        let v = crate::diag::env_var("KW_GENTLE_CHUNK")?;
        let parsed = v.trim().parse().ok();
        if parsed.is_none() {
            crate::diag::warn_once(&format!(
                "invalid KW_GENTLE_CHUNK={v:?} (expected a number of bytes, 0 for off); ignored"
            ));
        }
        parsed
    });
    from_env.unwrap_or_else(|| GENTLE_CHUNK.load(Ordering::Relaxed))
}

/// The most bytes one transfer of a capture's read-back moves (`Snapshot::read`): the
/// application runs beside that read, and one long transfer of a large buffer holds up its
/// own calls into the driver.
pub const SNAPSHOT_READ_PIECE: usize = 4 << 20;

/// The pieces `(offset, bytes)` of a transfer of `bytes` from `offset` in pieces of at most
/// `chunk` bytes (one piece when `chunk` is 0).
pub fn pieces(offset: usize, bytes: usize, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
    let chunk = if chunk == 0 { bytes.max(1) } else { chunk };
    (0..bytes.div_ceil(chunk)).map(move |i| {
        let start = i * chunk;
        (offset + start, chunk.min(bytes - start))
    })
}

/// A block of device memory. Transfers are ordered on the owning device's queue and block
/// until done.
pub trait DeviceMemory: Send + Sync {
    /// Its size in bytes.
    fn len_bytes(&self) -> usize;
    /// Copies `data` to the device at byte `offset`.
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError>;
    /// Copies from the device at byte `offset` into `out` (after all enqueued work).
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError>;
    /// Copies all of `src` (same device, same size or smaller) to the start of this buffer.
    fn copy_from(&self, src: &dyn DeviceMemory) -> Result<(), BackendError>;
    /// Sets every byte to zero. The default writes zeros from the host in chunks; backends
    /// with a device-side fill override it (no host memory, no transfer).
    fn fill_zero(&self) -> Result<(), BackendError> {
        const CHUNK: usize = 1 << 20;
        let zeros = vec![0u8; CHUNK.min(self.len_bytes())];
        let mut offset = 0;
        while offset < self.len_bytes() {
            let n = CHUNK.min(self.len_bytes() - offset);
            self.write(offset, &zeros[..n])?;
            offset += n;
        }
        Ok(())
    }
    /// The address the device sees for its first byte, where the backend has one (a CUDA
    /// device pointer; an application's memory may start anywhere). `None` where it has not
    /// (an OpenCL buffer starts at the device's base-address alignment).
    fn device_address(&self) -> Option<u64> {
        None
    }
    /// Whether this memory and `other` share bytes: where both have device addresses
    /// ([`DeviceMemory::device_address`]), whether their ranges meet; otherwise whether they
    /// are the same object (a backend without addresses compares its handles instead: an
    /// OpenCL buffer viewed twice is one memory).
    fn overlaps(&self, other: &dyn DeviceMemory) -> bool {
        match (self.device_address(), other.device_address()) {
            (Some(a), Some(b)) => {
                let (la, lb) = (self.len_bytes() as u64, other.len_bytes() as u64);
                la > 0 && lb > 0 && a < b.saturating_add(lb) && b < a.saturating_add(la)
            }
            _ => std::ptr::addr_eq(self as *const Self, other as *const dyn DeviceMemory),
        }
    }
    /// The concrete type, for the backend that made it.
    fn as_any(&self) -> &dyn Any;
}

/// Checks that `[offset, offset + bytes)` lies in a buffer of `len` bytes.
pub fn check_range(
    op: &'static str,
    offset: usize,
    bytes: usize,
    len: usize,
) -> Result<(), BackendError> {
    match offset.checked_add(bytes) {
        Some(end) if end <= len => Ok(()),
        _ => Err(BackendError::OutOfRange {
            op,
            bytes,
            offset,
            len,
        }),
    }
}

impl std::fmt::Debug for dyn DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceMemory({} bytes)", self.len_bytes())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pieces_cover_the_range_once() {
        let p: Vec<_> = super::pieces(10, 25, 10).collect();
        assert_eq!(p, vec![(10, 10), (20, 10), (30, 5)]);
        let p: Vec<_> = super::pieces(3, 25, 0).collect();
        assert_eq!(p, vec![(3, 25)]);
        assert_eq!(super::pieces(0, 0, 4).count(), 0);
        let p: Vec<_> = super::pieces(0, 8, 4).collect();
        assert_eq!(p, vec![(0, 4), (4, 4)]);
    }

    use super::*;
    use std::sync::Mutex;

    /// Memory on the host, with only the required methods (so the defaults are what runs).
    struct HostMemory(Mutex<Vec<u8>>);

    impl DeviceMemory for HostMemory {
        fn len_bytes(&self) -> usize {
            self.0.lock().unwrap().len()
        }
        fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError> {
            let mut m = self.0.lock().unwrap();
            check_range("write", offset, data.len(), m.len())?;
            m[offset..offset + data.len()].copy_from_slice(data);
            Ok(())
        }
        fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError> {
            let m = self.0.lock().unwrap();
            check_range("read", offset, out.len(), m.len())?;
            out.copy_from_slice(&m[offset..offset + out.len()]);
            Ok(())
        }
        fn copy_from(&self, _: &dyn DeviceMemory) -> Result<(), BackendError> {
            unimplemented!("not used by this test")
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn the_default_fill_zero_clears_every_byte_across_chunks() {
        for len in [0, 1, (1 << 20) - 1, 1 << 20, (5 << 19) + 3] {
            let m = HostMemory(Mutex::new(vec![0xAB; len]));
            m.fill_zero().unwrap();
            assert!(m.0.lock().unwrap().iter().all(|&b| b == 0), "len {len}");
        }
    }
}
