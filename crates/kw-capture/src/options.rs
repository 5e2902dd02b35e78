//! Writer settings.

/// Default raw bytes per chunk: 4 MiB (each chunk is an independent zstd frame).
pub const DEFAULT_CHUNK_SIZE: usize = 4 << 20;
/// Default zstd level: 1 (fastest of the regular levels).
pub const DEFAULT_LEVEL: i32 = 1;

/// How a capture is compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// zstd level, 1..=22 (1 to 3 keep the writer above 1 GB/s on two cores).
    pub level: i32,
    /// Raw bytes per chunk: a power of two from 1 KiB to 1 GiB.
    pub chunk_size: usize,
    /// Compression threads (chunks are compressed in parallel; 1 compresses on the caller).
    pub threads: usize,
    /// Byte-shuffle buffers of 2-, 4- and 8-byte elements (by their `elem_type`: `f32`,
    /// `i64`, ...) before compressing them: faster and smaller for numeric data. Recorded per
    /// frame (`"filter": "shuffle4"`).
    pub shuffle: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            level: DEFAULT_LEVEL,
            chunk_size: DEFAULT_CHUNK_SIZE,
            threads: cpu_count(),
            shuffle: true,
        }
    }
}

impl WriteOptions {
    /// Checks the settings; the error says which one is out of range.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=22).contains(&self.level) {
            return Err(format!("zstd level {} is not in 1..=22", self.level));
        }
        if !self.chunk_size.is_power_of_two() || !(1024..=1 << 30).contains(&self.chunk_size) {
            return Err(format!(
                "chunk size {} is not a power of two from 1024 to 2^30",
                self.chunk_size
            ));
        }
        if self.threads == 0 {
            return Err("threads must be at least 1".to_string());
        }
        Ok(())
    }
}

/// The number of CPUs this process may use (asked once: the query reads cgroup files).
pub(crate) fn cpu_count() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}
