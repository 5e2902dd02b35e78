//! The captures' section: one row per capture file (kernel, problem size, device, space).

use super::html::Page;
use crate::cmd::capture::{date, device, human, problem_size, tuning_key};
use kw_capture::Capture;
use std::path::PathBuf;

/// One row: what the capture holds, or why it cannot be read (also pushed on `unreadable`).
fn row(path: &PathBuf, unreadable: &mut Vec<String>) -> Vec<String> {
    let name = path.display().to_string();
    let c = match Capture::open(path) {
        Ok(c) => c,
        Err(e) => {
            unreadable.push(format!("{name}: {e}"));
            return vec![
                name,
                format!("unreadable: {e}"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ];
        }
    };
    let meta = c.metadata();
    let space = c
        .metadata_as::<kw_core::capture_meta::CaptureMetadata>()
        .map_err(|e| e.to_string())
        .and_then(|m| {
            kw_replay::launch_space::space_of(&m, &m.device)
                .map(|s| format!("{} valid of {}", s.len(), s.product()))
                .map_err(|e| e.to_string())
        })
        .unwrap_or_else(|e| format!("cannot be built: {e}"));
    vec![
        name,
        tuning_key(meta),
        problem_size(meta),
        device(meta),
        space,
        date(meta, path),
        format!("{} ({} raw)", human(c.file_len()), human(c.raw_len())),
    ]
}

/// Adds the captures' table; the captures that cannot be read are pushed on `unreadable`.
pub fn section(page: &mut Page, files: &[PathBuf], unreadable: &mut Vec<String>) {
    page.section("Captures");
    let rows: Vec<Vec<String>> = files.iter().map(|f| row(f, unreadable)).collect();
    page.table(
        &[
            "file",
            "tuning key",
            "problem size",
            "device",
            "configurations",
            "date",
            "size",
        ],
        &rows,
    );
}
