//! One capture's search shared by several devices of one model (`kw tune --devices`): one
//! isolated evaluator (worker process) per device, driven by [`Tuner::run_parallel`], every
//! result in the one results log with the device that measured it; the progress lines count
//! evaluations by device, a device that fails is named when it is dropped, and the summary
//! says what each device did.

use super::args::TuneArgs;
use super::device_set::label as device_label;
use super::progress::Watch;
use crate::cmd::isolated::IsolatedEvaluator;
use anyhow::{bail, Result};
use kernel_wisdom::ListedDevice;
use kw_tune::{Lane, LaneEvent, LaneReport, Strategy, TuneReport, Tuner};

/// The options a search on several devices does not take (they measure one device's share
/// of time, or run in this process), refused with the reason.
pub(super) fn check_options(args: &TuneArgs) -> Result<()> {
    let refused = [
        (
            args.no_isolation,
            "--no-isolation (one worker per device is the point)",
        ),
        (args.objective.is_some(), "--objective"),
        (args.max_share.is_some(), "--max-share"),
        (args.max_device_time.is_some(), "--max-device-time"),
    ];
    if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
        bail!(
            "{what} is not available when several devices share one search (--devices); \
             give one device (--device or --devices with one index)"
        );
    }
    Ok(())
}

/// The run's label in progress lines: the tuning key, and its devices when `--devices` chose
/// them (`vector_add on devices 0, 1`).
pub(super) fn label(key: &str, devices: &[ListedDevice]) -> String {
    // A key read from a capture must not drive the terminal (progress, summary).
    format!(
        "{}{}",
        kw_core::diag::printable(key),
        super::device_set::on_devices(devices)
    )
}

/// `devices: device 0 12 evaluations, device 1 11 (dropped: REASON)`.
pub(super) fn by_device(lanes: &[LaneReport]) -> String {
    let parts: Vec<String> = lanes
        .iter()
        .map(|l| match &l.dropped {
            None => format!("{} {} evaluations", l.name, l.evaluations),
            Some(why) => format!("{} {} evaluations (dropped: {why})", l.name, l.evaluations),
        })
        .collect();
    format!("devices: {}", parts.join(", "))
}

/// Runs the search on `evaluators` (those of `devices`, in order), feeding `watch`.
pub(super) fn run(
    tuner: &mut Tuner<'_>,
    strategy: &mut dyn Strategy,
    evaluators: &mut [IsolatedEvaluator],
    devices: &[ListedDevice],
    watch: &mut Watch<'_>,
) -> Result<(TuneReport, Vec<LaneReport>)> {
    let mut lanes: Vec<Lane<'_>> = evaluators
        .iter_mut()
        .zip(devices)
        .map(|(e, d)| Lane {
            name: device_label(d),
            evaluator: e,
        })
        .collect();
    let names: Vec<String> = lanes.iter().map(|l| l.name.clone()).collect();
    let mut counts = vec![0u64; lanes.len()];
    let mut alive = lanes.len();
    let mut observe = |event: LaneEvent<'_>| match event {
        LaneEvent::Result {
            lane,
            point,
            result,
        } => {
            counts[lane] += 1;
            let by: Vec<String> = names
                .iter()
                .zip(&counts)
                .map(|(n, c)| format!("{n}: {c}"))
                .collect();
            watch.pace.detail = format!("; by device: {}", by.join(", "));
            watch.observe(point, result);
            watch.halted().is_none()
        }
        LaneEvent::Dropped {
            lane,
            reason,
            retried,
        } => {
            alive -= 1;
            let then = match retried {
                Some(_) => "the configuration it was measuring goes to another device",
                None => "the configuration it was measuring is recorded as failed",
            };
            eprintln!(
                "kw tune: {} ({}) failed and is dropped: {reason}; {then}; the run goes on \
                 with {alive} device(s)",
                names[lane], devices[lane].info.name
            );
            true
        }
    };
    let (report, lanes) = tuner.run_parallel(strategy, &mut lanes, &mut observe)?;
    Ok((report, lanes))
}
