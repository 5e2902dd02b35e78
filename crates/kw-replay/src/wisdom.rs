//! [`tuned_record`]: the wisdom record a tuning run writes for its best configuration.

use kw_capture::record::{now_rfc3339, TOOL_VERSION};
use kw_core::tolerance::{Tolerance, ToleranceOverride};
use kw_core::wisdom::{Objective, Provenance, SpaceFingerprint, WisdomDevice, WisdomRecord};
use kw_core::{
    capture_meta::CaptureMetadata, config::Config, device::DeviceInfo, space::TuningSpace,
};
use std::collections::BTreeMap;
use std::path::Path;

/// What a tuning run adds to its record beyond the capture and the measurement.
#[derive(Clone, Debug)]
pub struct TuningRun<'a> {
    /// The search strategy's name.
    pub strategy: &'a str,
    /// Configurations evaluated.
    pub evaluations: u64,
    /// The capture replayed.
    pub capture: &'a Path,
    /// Its checksum ([`crate::capture_checksum`]).
    pub capture_checksum: String,
    /// Why the run is unverified (`None`: every output was checked).
    pub unverified: Option<String>,
    /// The overrides of the definition's tolerances the run verified with (`None`: the run
    /// did not verify).
    pub tolerance: Option<ToleranceOverride>,
}

/// The tolerance each buffer with a reference output is verified with: the definition's
/// ([`kw_core::tolerance`]; the default where it declares none) with `over`'s overrides.
pub fn verified_tolerances(
    meta: &CaptureMetadata,
    over: ToleranceOverride,
) -> BTreeMap<String, Tolerance> {
    meta.args
        .iter()
        .zip(&meta.kernel.args)
        .filter(|(a, _)| a.output.is_some())
        .map(|(a, d)| (a.name.clone(), over.apply(d.tolerance.unwrap_or_default())))
        .collect()
}

/// The record of `best` (median `median_ms` over `samples` timed runs) for the capture's
/// problem size on `device`, in `space`, stamped with the date, host and tool version.
pub fn tuned_record(
    meta: &CaptureMetadata,
    device: &DeviceInfo,
    space: &TuningSpace,
    best: Config,
    median_ms: f64,
    samples: usize,
    run: TuningRun<'_>,
) -> WisdomRecord {
    WisdomRecord {
        config: best,
        problem_size: meta.problem_size.clone(),
        device: WisdomDevice::of(device),
        objective: Objective {
            median_ms,
            samples: u32::try_from(samples).unwrap_or(u32::MAX),
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance {
            date: now_rfc3339(),
            host: kw_core::host::host_name().to_string(),
            tool_version: TOOL_VERSION.into(),
            strategy: run.strategy.to_string(),
            evaluations: run.evaluations,
            capture_file: run
                .capture
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            capture_checksum: run.capture_checksum,
            verified: Some(run.unverified.is_none()),
            unverified_reason: run.unverified.unwrap_or_default(),
            tolerances: run
                .tolerance
                .map(|over| verified_tolerances(meta, over))
                .unwrap_or_default(),
            ..Provenance::default()
        },
        alternates: Vec::new(),
    }
}
