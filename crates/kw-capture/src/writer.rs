//! Writing a capture file atomically: temporary name, fsync, rename.

use crate::buffer::CaptureBuffer;
use crate::encode::{encode, EncodedSizes};
use crate::error::{CaptureError, Result};
use crate::format::EXTENSION;
use crate::name::sanitize_stem;
use crate::options::WriteOptions;
use serde::Serialize;
use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A capture written to disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenCapture {
    /// Where the file is (inside the directory that was asked for).
    pub path: PathBuf,
    /// Sizes of the file and its contents.
    pub sizes: EncodedSizes,
}

/// Writes capture files with fixed [`WriteOptions`].
#[derive(Debug, Clone, Default)]
pub struct CaptureWriter {
    options: WriteOptions,
}

impl CaptureWriter {
    /// A writer with these options (checked when writing).
    pub fn new(options: WriteOptions) -> Self {
        CaptureWriter { options }
    }

    /// The options in use.
    pub fn options(&self) -> &WriteOptions {
        &self.options
    }

    /// Writes `buffers` and `metadata` into `dir/<sanitised file_stem>.kwcap`.
    ///
    /// The bytes go to a temporary file `.<name>.tmp-<pid>-<n>` in `dir`, which is fsynced and
    /// then renamed to its final name; on any error the temporary file is removed, so a crash or
    /// a full disk never leaves a file under the final name. An existing file of the same name is
    /// replaced (use [`crate::capture_file_stem`] for unique names). `file_stem` is sanitised with
    /// [`sanitize_stem`]: whatever it contains, the file stays inside `dir`.
    pub fn write(
        &self,
        dir: &Path,
        file_stem: &str,
        metadata: &impl Serialize,
        buffers: &[CaptureBuffer],
    ) -> Result<WrittenCapture> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!("{}.{EXTENSION}", sanitize_stem(file_stem));
        let path = dir.join(&name);
        let metadata = serde_json::to_value(metadata).map_err(|e| CaptureError::InvalidInput {
            path: path.clone(),
            detail: format!("metadata does not serialise to JSON: {e}"),
        })?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        // Private (0600) unless KW_FILE_MODE asks for shared modes: a capture holds the
        // application's whole buffers.
        let file = kw_core::files::FileModes::get()
            .create_new()
            .open(&tmp)
            .map_err(|e| CaptureError::io(&tmp, "creating the temporary capture file", e))?;
        let mut guard = TempFile {
            path: &tmp,
            keep: false,
        };
        let sizes = self.write_to(&file, &path, metadata, buffers)?;
        file.sync_all()
            .map_err(|e| CaptureError::io(&tmp, "syncing the capture file to disk", e))?;
        drop(file);
        std::fs::rename(&tmp, &path)
            .map_err(|e| CaptureError::io(&path, "renaming the capture file into place", e))?;
        guard.keep = true;
        // Make the rename durable; some file systems cannot sync directories, which is harmless.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(WrittenCapture { path, sizes })
    }

    /// Encodes a capture into any seekable writer (a file, a `Cursor<Vec<u8>>`, ...). `label`
    /// names the destination in errors. Does not sync or rename: see [`CaptureWriter::write`].
    pub fn write_to<W: Write + Seek>(
        &self,
        mut out: W,
        label: &Path,
        metadata: serde_json::Value,
        buffers: &[CaptureBuffer],
    ) -> Result<EncodedSizes> {
        encode(&mut out, label, &self.options, metadata, buffers)
    }
}

/// Removes the temporary file unless told to keep it (also when a panic unwinds through).
struct TempFile<'a> {
    path: &'a Path,
    keep: bool,
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

/// Writes a capture with the default options; see [`CaptureWriter::write`]. Returns the path.
pub fn write_capture(
    dir: impl AsRef<Path>,
    file_stem: &str,
    metadata: &impl Serialize,
    buffers: Vec<CaptureBuffer>,
) -> Result<PathBuf> {
    CaptureWriter::default()
        .write(dir.as_ref(), file_stem, metadata, &buffers)
        .map(|w| w.path)
}
