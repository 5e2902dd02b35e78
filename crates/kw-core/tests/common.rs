//! Helpers shared by kw-core's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/data/tuning-spaces` beside the checkout, if present (CI has it; a user's clone
/// may not, in which case tests that need it say so and skip).
pub fn shared_spaces() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/tuning-spaces");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found (the shared data sits beside the checkout in CI)",
            dir.display()
        );
        None
    }
}
