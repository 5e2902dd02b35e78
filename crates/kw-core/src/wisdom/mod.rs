//! Wisdom files: tuned configurations per tuning key, and the selection of the closest record.
//!
//! One human-readable JSON file per tuning key ([`WisdomFile`], `KEY.json` in a wisdom
//! directory). Writers lock and replace the file atomically ([`add_record`]); readers select the
//! record for a device and problem size in five steps ([`select`]):
//!
//! 1. same device name, exact problem size;
//! 2. same device name, nearest problem size;
//! 3. same architecture, nearest problem size;
//! 4. any device of the same backend, nearest problem size;
//! 5. the definition's default configuration.
//!
//! "Nearest" sums the per-dimension distances of the problem sizes on a log scale, so shape
//! matters, not only the product. When the caller knows the kernel's launch geometry, a fill
//! rule may prefer a record as near, or at the next distance, that keeps the device busy ([`select_filling`]). Records whose configuration is not valid in the current
//! tuning space are skipped (the kernel changed), and a record can only select values that the
//! application declared: wisdom is data, never code.

mod file;
mod record;
mod select;

pub use file::{
    add_record, check_key, check_writable, find_wisdom_file, find_wisdom_files, merge_files,
    merge_into, wisdom_file_name, AddOutcome, MergeReport, ReplacePolicy, WisdomError, WisdomFile,
    MERGE_HELD_LOCKS, WISDOM_FORMAT_VERSION,
};
pub use record::{
    Alternate, Confirmation, Objective, Provenance, SpaceFingerprint, WisdomDevice, WisdomRecord,
    ORIGIN_ONLINE,
};
pub use select::{
    earliest_step, explain, explain_numbered, log_distance, select, select_filling, Fill, FillNote,
    Query, Selection, Step, KEEP_FILL,
};
