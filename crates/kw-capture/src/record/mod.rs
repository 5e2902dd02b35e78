//! Recording launches into captures: the one capture writer of the project. The runtime
//! (`kernel-wisdom`, for applications) records around each selected launch with
//! [`before_launch`] / [`after_launch`] and hands the [`CaptureJob`] to its background
//! writer; [`capture_launch`] (for `kw tune --bundled` and tests) runs one launch here and
//! now and writes it at once; [`snapshot_before`] / [`snapshot_after`] record around a
//! launch without waiting (device copies on the launch's queue, read back by
//! [`Deferred::finish`] on another thread: online tuning). All produce the schema of
//! [`kw_core::capture_meta::CaptureMetadata`], with frames named by [`input_frame_name`] /
//! [`output_frame_name`] and provenance filled by [`provenance_now`].
//!
//! [`CaptureJob`]: crate::CaptureJob

mod deferred;
mod error;
mod launch;
mod provenance;
mod recorder;

pub use deferred::{snapshot_after, snapshot_before, Deferred, SnapshotBefore};
pub use error::RecordError;
pub use launch::{capture_launch, capture_launch_with, HostArg, LaunchData, SymbolValue};
pub use provenance::{now_rfc3339, provenance_now, TOOL_VERSION};
pub use recorder::{
    after_launch, before_launch, input_frame_name, output_frame_name, symbol_frame_name, Before,
};
