//! # kw-capture
//!
//! Capture files of kernel-wisdom: one self-describing file per captured kernel launch, holding
//! the caller's JSON metadata (kernel definition, arguments, problem size, device, provenance)
//! and the launch's buffers, zstd-compressed in independent chunks, deduplicated by content and
//! protected by BLAKE3 checksums. The layout is described in [`format`](mod@format) and in `FORMAT.md`.
//!
//! - Write: [`write_capture`], [`CaptureWriter`] (options: [`WriteOptions`]), or a
//!   [`BackgroundWriter`] that writes [`CaptureJob`]s on its own thread.
//! - Read: [`Capture::open`] (memory-mapped, validated), [`Capture::read_buffer`],
//!   [`Capture::verify`].
//! - Names: [`capture_file_stem`] and [`sanitize_stem`] keep files inside their directory.
//! - Record: [`record`] is the one capture recorder of the project: `before_launch` /
//!   `after_launch` around a launch (the runtime, `kernel-wisdom`) and `capture_launch` (one
//!   launch here and now: `kw tune --bundled` and tests), both writing the metadata schema
//!   `kw_core::capture_meta::CaptureMetadata`.
//!
//! Files are written to a temporary name, synced and renamed: a crash or a full disk never leaves
//! a file that looks valid. Every problem with a file is a [`CaptureError`] naming the file.
//!
//! ## Layer
//!
//! Layer 1 (`docs/architecture.md`): depends on `kw-core` only among the workspace crates, and on
//! no backend; the recorder copies buffers through the `kw_core::backend::Device` trait. Used by
//! `kernel-wisdom` (capture on launch), `kw-replay` (loading captures) and `kw-cli`.
//!
//! ## Where to start reading
//!
//! `FORMAT.md`, then `writer.rs` and `reader.rs`; `record/recorder.rs` for what a capture
//! records; `background.rs` for the writer thread.

mod background;
mod buffer;
mod decode;
mod encode;
mod error;
mod filter;
pub mod format;
mod hash;
mod name;
mod options;
mod reader;
pub mod record;
mod validate;
mod writer;

pub use background::{BackgroundWriter, CaptureJob};
pub use buffer::{BufferData, CaptureBuffer};
pub use encode::EncodedSizes;
pub use error::{CaptureError, Result};
pub use format::{Header, EXTENSION, FORMAT_VERSION};
pub use name::{capture_file_stem, sanitize_stem, MAX_STEM_LEN};
pub use options::{WriteOptions, DEFAULT_CHUNK_SIZE, DEFAULT_LEVEL};
pub use reader::{BufferInfo, Capture, VerifySummary};
pub use writer::{write_capture, CaptureWriter, WrittenCapture};
