//! Tuning one capture: the session, the evaluator (isolated workers or in process), the
//! tuning loop, the summary and the wisdom record.

use super::args::{parse_duration, TuneArgs};
use super::device::{backend_of, open_indexed};
use super::progress::{Watch, WithProgress, COMPILE_GIVE_UP};
use super::report::{objective_of, print_summary, print_timing, TimingReport};
use super::share::ShareThrottle;
use crate::cmd::isolated::{EvalTimeout, IsolatedEvaluator};
use crate::cmd::worker::WorkerArgs;
use anyhow::{bail, Context, Result};
use kw_core::wisdom::{add_record, ReplacePolicy};
use kw_replay::{
    capture_checksum, MeasureOptions, ReplayEvaluator, ReplaySession, ReplayStats, VerifyMode,
};
use kw_tune::{strategies, Evaluator, LogHeader, LogLock, ResultsLog, Stop, StopReason, Tuner};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The run's wall-time limit, if its stop condition has one that alone stops it.
/// The largest host transfer (bytes) while the device is shared (`--max-share`,
/// `--max-device-time`): about 0.1 ms over PCIe 4/5, shorter than nearly any kernel run.
const SHARED_TRANSFER_PIECE: usize = 2 << 20;

fn wall_limit(stop: &Stop) -> Option<Duration> {
    match stop {
        Stop::WallTime(t) => Some(*t),
        Stop::Any(list) => list.iter().filter_map(wall_limit).min(),
        _ => None,
    }
}

/// How one capture's tuning ended.
pub(super) struct Outcome {
    pub(super) reason: StopReason,
    pub(super) wrote_wisdom: bool,
    /// The devices (`kw devices` indices) dropped from a search on several devices: they
    /// failed, and take no more captures.
    pub(super) dropped: Vec<usize>,
}

/// Tunes `capture` on the device `--device` names, or on `devices` when given (`--devices`):
/// one device as `--device` does, several (of one model) sharing the search.
pub(super) fn tune_one(
    args: &TuneArgs,
    capture: &Path,
    log_path: &Path,
    stop: &Stop,
    cancel: &Arc<AtomicBool>,
    devices: &[kernel_wisdom::ListedDevice],
) -> Result<Outcome> {
    // One run per results log, from here until its wisdom is written: a second `kw tune` on
    // this log is refused at once, naming this process (before it could rename the log
    // aside or append to it).
    let lock = Arc::new(LogLock::acquire(log_path)?);
    if args.max_share.is_some() || args.max_device_time.is_some() {
        // Sharing the device with an application: never hold it long at a time.
        kw_core::backend::set_gentle(SHARED_TRANSFER_PIECE);
    }
    let (device, device_text) = match devices {
        [] => open_indexed(backend_of(capture)?, args.device.as_deref())?,
        [first, ..] => (kernel_wisdom::open_listed(first)?, first.identity()),
    };
    if devices.len() > 1 {
        super::lanes::check_options(args)?;
    }
    let info = device.info().clone();
    // Isolated: this process only reads the capture's metadata; workers replay it.
    let session = if args.no_isolation {
        Some(Arc::new(ReplaySession::load(capture, device.clone())?))
    } else {
        None
    };
    let (meta, space) = match &session {
        Some(s) => (s.metadata().clone(), s.space().clone()),
        None => ReplaySession::inspect(capture, &info)?,
    };
    let space = &space;
    let def = meta.kernel.clone();
    // A wisdom file of another tuning key under this key's file name is found now, not when
    // the record is written after the whole run.
    kw_core::wisdom::check_key(&args.wisdom_dir()?, &def.tuning_key)?;
    let has_reference = meta.args.iter().any(|a| a.output.is_some());
    let size: Vec<String> = meta.problem_size.iter().map(i64::to_string).collect();
    // `(N configurations)` stays as it is: scripts read it (the side-by-side bench).
    eprintln!(
        "kw tune: {} ({} configurations) on {}; capture {}, problem size {}",
        kw_core::diag::printable(&def.tuning_key),
        space.len(),
        info.summary(),
        capture.display(),
        size.join("x")
    );
    let label = super::lanes::label(&def.tuning_key, devices);
    if !devices.is_empty() {
        eprintln!("kw tune: {label}: {}", capture.display());
    }
    let unverified = unverified_reason(args, capture, &meta)?;
    if let Some(reason) = &unverified {
        eprintln!("kw tune: warning: tuning UNVERIFIED: {reason}");
    }
    let verify = !args.no_verify && has_reference;
    let options = MeasureOptions {
        warmup: args.warmup,
        min_samples: 3.min(args.samples.max(1)),
        max_samples: args.samples.max(1),
        time_budget: Duration::from_millis(args.sample_time_ms),
        verify: if verify {
            VerifyMode::Last
        } else {
            VerifyMode::Off
        },
        tolerance: args.tolerance()?,
    };
    let threads = args
        .compile_threads
        .unwrap_or_else(kw_replay::CompilePool::default_threads);
    let mut header = LogHeader::new(space).with_strategy(&args.strategy, args.seed);
    header.kernel_name = Some(def.kernel_name.clone());
    header.device_name = Some(info.name.clone());
    header.problem_size = Some(meta.problem_size.clone());
    let objective = super::objective::chosen(args, &def)?;
    if let Some(o) = &objective {
        header.objective = o.name.clone();
        header.maximize = o.maximize;
        header.objective_expression = Some(o.expr.to_string());
    }
    let checksum = capture_checksum(capture)?;
    header.capture_checksum = Some(checksum.clone());
    let default = reference_point(space, &def, &meta)?;
    header.default_key = Some(space.kt_key(&default));
    let (log, records) = if args.resume {
        ResultsLog::resume_locked(Arc::clone(&lock), space, &header)?
    } else {
        let (log, kept) = ResultsLog::create_keeping_locked(Arc::clone(&lock), &header)?;
        if let Some(old) = kept {
            eprintln!(
                "kw tune: {} existed; kept it as {} (use --resume to continue a log)",
                log_path.display(),
                old.display()
            );
        }
        (log, Vec::new())
    };
    // A budget below the log's results: only as many are replayed (the run stops there), so
    // a better result later in the log is not this run's. Said, not silent.
    if let Some(budget) = args.budget.filter(|&b| (records.len() as u64) > b) {
        eprintln!(
            "kw tune: warning: {} holds {} results, more than --budget {budget}: the run replays \
             the first {budget} and stops, so the log's later results (a better one among them?) \
             are not this run's; give --budget {} or more to use them all",
            log_path.display(),
            records.len(),
            records.len()
        );
    }
    // The run's wall-time limit, less what the resumed log already spent, interrupts even a
    // hung evaluation.
    let spent = records.iter().map(|r| r.elapsed_s).fold(0.0f64, f64::max);
    let deadline = wall_limit(stop).map(|t| {
        std::time::Instant::now() + t.saturating_sub(kw_core::duration::saturating_secs(spent))
    });
    let fixed_timeout = args
        .eval_timeout
        .as_deref()
        .map(parse_duration)
        .transpose()?;
    let default_key = space.kt_key(&default);
    let default_logged_s = records
        .iter()
        .find(|r| r.key == default_key && r.objective.is_some())
        .map(|r| r.eval_s);
    let mut in_process = session
        .as_ref()
        .map(|s| ReplayEvaluator::new(s.clone(), options.clone(), threads));
    let mut extra: Vec<IsolatedEvaluator> = Vec::new();
    let mut isolated = if in_process.is_none() {
        let exe = std::env::current_exe().context("finding the kw executable for the workers")?;
        let worker_args = WorkerArgs {
            capture: capture.to_path_buf(),
            device: device_text,
            warmup: options.warmup,
            min_samples: options.min_samples,
            max_samples: options.max_samples,
            sample_time_ms: args.sample_time_ms,
            verify,
            rtol: args.rtol,
            atol: args.atol,
            nan_is_error: args.nan_is_error,
            compile_threads: threads,
        };
        let make = |device: String| {
            let mut e = IsolatedEvaluator::new(
                exe.clone(),
                WorkerArgs {
                    device,
                    ..worker_args.clone()
                },
                EvalTimeout::new(fixed_timeout),
                cancel.clone(),
                deadline,
            );
            if let Some(s) = default_logged_s {
                e.learn_timeout(kw_core::duration::saturating_secs(s));
            }
            e
        };
        if devices.len() > 1 {
            // Several devices: one evaluator each (`isolated` is the first that survives,
            // for the confirmation, once the search is done).
            extra = devices.iter().map(|d| make(d.identity())).collect();
            None
        } else {
            Some(make(worker_args.device.clone()))
        }
    } else {
        None
    };
    let device_time = args
        .max_device_time
        .as_deref()
        .map(parse_duration)
        .transpose()?;
    if let (Some(e), true) = (
        &mut isolated,
        args.max_share.is_some() || device_time.is_some(),
    ) {
        // Not counted as evaluation time: a failure here shows again at the first evaluation.
        let _ = e.preload();
    }
    // `None`: several devices, whose evaluators are in `extra`.
    let inner: Option<&mut dyn Evaluator> = match (&mut in_process, &mut isolated) {
        (Some(e), _) => Some(e),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    };
    // With an objective other than the time, the search sees its scores.
    let mut ps = [1i64; 3];
    for (axis, v) in meta.problem_size.iter().take(3).enumerate() {
        ps[axis] = *v;
    }
    let mut objective_eval = None;
    let inner: Option<&mut dyn Evaluator> = match (&objective, inner) {
        (Some(o), Some(inner)) => Some(shorten(objective_eval.insert(
            super::objective::ObjectiveEval::new(inner, o.clone(), &def, space, ps),
        ))),
        (_, inner) => inner.map(shorten),
    };
    let mut throttle = None;
    let shared = args.max_share.is_some() || device_time.is_some();
    let inner: Option<&mut dyn Evaluator> = match (shared, inner) {
        (true, Some(inner)) => Some(shorten(throttle.insert(ShareThrottle::new(
            inner,
            args.max_share.unwrap_or(1.0),
            device_time,
        )))),
        (_, inner) => inner.map(shorten),
    };
    let total = stop.remaining_evaluations(&Default::default());
    let bar = super::progress::bar(&label, total);
    let mut pace = super::progress::Pace::new(&label, total, deadline);
    if !devices.is_empty() {
        // Runs side by side: plain lines, which name their devices, not live bars.
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        pace = pace.plain_lines();
    }
    // The captured configuration first: if it does not reproduce its own output, the
    // capture is inconsistent and the run stops there (see `inconsistent_capture`).
    let captured = space
        .point(&meta.config)
        .ok()
        .filter(|p| verify && space.contains(p));
    let mut initial: Vec<_> = captured.iter().cloned().collect();
    if captured.as_ref() != Some(&default) {
        initial.push(default.clone());
    }
    let seeding = super::prior::seeding(
        args,
        &def.tuning_key,
        &def.kernel_name,
        space,
        &info.name,
        &meta.problem_size,
    )?;
    let mut strategy = strategies::create_seeded(&args.strategy, args.seed, &seeding)?;
    let mut watch = Watch {
        bar: &bar,
        pace,
        failures: 0,
        best: None,
        compile_failures: 0,
        first_compile_error: None,
        gave_up: false,
        captured: captured.clone(),
        inconsistent: None,
        objective: objective.clone(),
    };
    let mut tuner = Tuner::new(space, stop.clone())
        .resume(log, records)
        .with_initial(initial)
        // Each worker compiles ahead on its own pool of `threads`; with several workers at
        // once (`--devices`) each queues its share, so that the compiles in flight match the
        // processors and each proposal is made knowing as many results as they allow.
        .with_lookahead(threads.div_ceil(args.workers.max(1)) + 1)
        .with_cancel(cancel.clone());
    let (report, lane_reports) = match inner {
        Some(inner) => {
            let mut wrapped = WithProgress { inner, watch };
            let report = tuner.run(strategy.as_mut(), &mut wrapped)?;
            watch = wrapped.watch;
            (report, Vec::new())
        }
        None => super::lanes::run(
            &mut tuner,
            strategy.as_mut(),
            &mut extra,
            devices,
            &mut watch,
        )?,
    };
    drop(tuner);
    let (gave_up, first_compile_error) = (watch.gave_up, watch.first_compile_error.take());
    let inconsistent = watch.inconsistent.take();
    let share_usage = throttle.as_ref().map(ShareThrottle::usage);
    let times = objective_eval.take().map(|e| e.times);
    if let Some(alive) = lane_reports.iter().position(|l| l.dropped.is_none()) {
        // The winner is confirmed on one device of the model, one that is still there.
        isolated = Some(extra.remove(alive));
    }
    if let Some(reason) = inconsistent {
        bar.finish_and_clear();
        bail!(inconsistent_capture(&meta, &reason));
    }
    bar.finish_and_clear();
    let stats = match (&in_process, &isolated) {
        (Some(e), _) => e.stats(),
        (_, Some(e)) => IsolatedEvaluator::combined_stats(std::iter::once(e).chain(&extra)),
        _ => ReplayStats::default(),
    };
    // The winner measured again against the default, interleaved, with the same evaluator
    // (isolated, unless --no-isolation), past the run's deadline.
    // The configuration in use (the capture's) when it is not the default and succeeded in
    // the search, with its result there.
    let in_use_result: Option<(kw_core::space::Point, f64)> =
        captured.as_ref().filter(|c| **c != default).and_then(|c| {
            (report.history.iter())
                .find(|e| &e.point == c && e.result.is_ok())
                .and_then(|e| e.result.as_ref().ok().map(|v| (c.clone(), *v)))
        });
    let in_use = in_use_result.as_ref().map(|(p, _)| p);
    // Also when the search's best is the default but the application used another
    // configuration: a single noisy measurement must not replace it unconfirmed.
    let to_confirm = |best: &kw_core::space::Point| *best != default || in_use.is_some();
    let mut confirm_usage = None;
    let confirmed = match (&report.best, &objective, args.confirm_rounds) {
        (Some((best, _)), None, rounds)
            if rounds > 0 && to_confirm(best) && report.reason != StopReason::Cancelled =>
        {
            if let Some(e) = isolated.as_mut() {
                e.set_deadline(None);
            }
            let eval: &mut dyn Evaluator = match (&mut in_process, &mut isolated) {
                (Some(e), _) => e,
                (None, Some(e)) => e,
                (None, None) => unreachable!("one evaluator is made"),
            };
            let top =
                super::confirm::candidates(&report, &default, in_use, args.confirm_top.max(1));
            Some(if shared {
                // Paced as the search was, in the account, with a device-time budget of its
                // own (--max-device-time again): it ends after the last whole round.
                let share = args.max_share.unwrap_or(1.0);
                let mut paced = ShareThrottle::new(eval, share, device_time);
                let c = super::confirm::confirm(&mut paced, &default, in_use, &top, rounds);
                confirm_usage = Some(paced.usage());
                c
            } else {
                super::confirm::confirm(eval, &default, in_use, &top, rounds)
            })
        }
        _ => None,
    };
    let replaced: u64 = isolated
        .iter()
        .chain(&extra)
        .map(|e| e.starts.saturating_sub(1))
        .sum();
    if replaced > 0 {
        eprintln!("kw tune: {replaced} evaluation worker(s) were replaced after a hang or crash");
    }
    drop(isolated); // its worker is stopped before anything else uses the device
    drop(extra);
    // Runs side by side (several captures on several devices) print whole summaries.
    let _output = super::output_lock();
    print_summary(
        &def.tuning_key,
        space,
        &report,
        &default,
        &stats,
        threads,
        objective.as_ref(),
    );
    match (&lane_reports[..], devices) {
        ([], []) => {}
        ([], [one]) => println!(
            "  {}",
            super::lanes::by_device(&[kw_tune::LaneReport {
                name: super::device_set::label(one),
                evaluations: report.progress.evaluations - report.replayed,
                dropped: None,
            }])
        ),
        (lanes, _) => println!("  {}", super::lanes::by_device(lanes)),
    }
    let dropped: Vec<usize> = lane_reports
        .iter()
        .zip(devices)
        .filter(|(l, _)| l.dropped.is_some())
        .map(|(_, d)| d.index)
        .collect();
    let confirmed = match confirmed {
        Some(Ok(c)) => {
            println!("  {}", c.line);
            // The rounds may rank another candidate first than the search's single samples:
            // say which configuration the record takes.
            let search_best = report.best.as_ref().map(|(p, _)| p);
            if search_best.is_some_and(|b| *b != c.point)
                && c.point != default
                && Some(&c.point) != in_use
            {
                println!(
                    "  recorded: {} (the fastest over the rounds, not the search's best)",
                    space.config(&c.point).key()
                );
            }
            Some(c)
        }
        Some(Err(why)) => {
            let kept = if in_use.is_some() {
                "the configuration in use"
            } else {
                "the search's best"
            };
            println!("  confirmation: not possible ({why}); {kept} is recorded unconfirmed");
            None
        }
        None => None,
    };
    // Unconfirmed while a configuration is in use: it stays (the search's best by one noisy
    // sample does not replace it).
    let unconfirmed_in_use = match (&confirmed, args.confirm_rounds) {
        (None, rounds) if rounds > 0 && objective.is_none() => in_use_result.clone(),
        _ => None,
    };
    if let Some((busy, wall)) = share_usage {
        // Read by the runtime's online tuning (`kernel_wisdom::online`): keep the words.
        // The confirmation's time is in both (its pauses in the wall time) and on its own.
        let (confirm_busy, confirm_wall) = confirm_usage.unwrap_or_default();
        println!(
            "  device share: busy_s={:.6} wall_s={:.6} cap={} confirm_s={:.6}",
            (busy + confirm_busy).as_secs_f64(),
            (wall + confirm_wall).as_secs_f64(),
            args.max_share.unwrap_or(1.0),
            confirm_busy.as_secs_f64()
        );
    }
    match &unverified {
        Some(reason) => println!("  verification: UNVERIFIED ({reason})"),
        None => println!("  verification: every output checked against the captured reference"),
    }
    if gave_up {
        eprintln!(
            "kw tune: stopped: the first {COMPILE_GIVE_UP} configurations all failed to compile \
             (is the kernel or its definition broken?). The first error:\n  {}",
            first_compile_error.as_deref().unwrap_or("?")
        );
    }
    if args.report_timing {
        // In process (the workers are gone); the default configuration was measured fine.
        let session = match session {
            Some(s) => s,
            None => Arc::new(ReplaySession::load(capture, device.clone())?),
        };
        let mut eval = match in_process {
            Some(e) => e,
            None => ReplayEvaluator::new(session.clone(), options, 1),
        };
        // Repeating the default's time means something only when the search saw times.
        let repeat = match (objective_of(&report, &default), objective.is_none()) {
            (Some(a), true) => eval.measure(&default).ok().map(|m| (a, m.median_ms)),
            _ => None,
        };
        let kernel = report.best.as_ref().and_then(|(p, score)| match &times {
            Some(t) => t.get(p).map(|ms| (session.bytes_moved(), *ms)),
            None => Some((session.bytes_moved(), *score)),
        });
        let copy = session.copy_bandwidth(20)?;
        print_timing(&TimingReport {
            repeat,
            kernel,
            copy,
        });
    }
    if report.reason == StopReason::Cancelled {
        return Ok(Outcome {
            reason: report.reason,
            wrote_wisdom: false,
            dropped,
        });
    }
    let Some((best, score)) = &report.best else {
        eprintln!("kw tune: no configuration succeeded; no wisdom written");
        if !gave_up {
            if let Some(e) = first_compile_error {
                eprintln!("kw tune: the first compile error: {e}");
            }
        }
        return Ok(Outcome {
            reason: report.reason,
            wrote_wisdom: false,
            dropped,
        });
    };
    let mut logged = kw_tune::log::read_log(log_path)?;
    kw_tune::log::drop_inconsistent(log_path, space, &mut logged.records);
    let samples_of = |p: &kw_core::space::Point| {
        let key = space.kt_key(p);
        (logged.records.iter())
            .find(|r| r.key == key)
            .and_then(|r| r.samples.clone())
            .unwrap_or_default()
    };
    let best_samples = samples_of(best);
    let samples = best_samples.len();
    // The record's time: the search's value, or with another objective the best
    // configuration's median time (this run's, else the log's samples).
    let ms = match &times {
        None => *score,
        Some(t) => t
            .get(best)
            .copied()
            .unwrap_or_else(|| kw_replay::median(&mut best_samples.clone())),
    };
    // A confirmed run records what the confirmation chose, at its time over the rounds.
    let (best, ms, samples) = match (&confirmed, &unconfirmed_in_use) {
        (Some(c), _) => (&c.point, c.median_ms, c.confirmation.rounds as usize),
        (None, Some((p, v))) => (p, *v, samples_of(p).len()),
        (None, None) => (best, ms, samples),
    };
    let mut record = kw_replay::tuned_record(
        &meta,
        &info,
        space,
        space.config(best),
        ms,
        samples,
        kw_replay::TuningRun {
            strategy: &args.strategy,
            evaluations: report.progress.evaluations,
            capture,
            capture_checksum: checksum,
            unverified: unverified.clone(),
            tolerance: verify.then(|| args.tolerance()).transpose()?,
        },
    );
    // Other configurations measured here, for the selection at sizes between records (only
    // where the log's values are times: another objective's scores are not).
    if objective.is_none() && logged.header.objective == kw_tune::log::LOG_TIME {
        let best_key = space.kt_key(best);
        let best_search = (logged.records.iter())
            .filter(|r| r.key == best_key)
            .filter_map(|r| r.objective)
            .fold(f64::INFINITY, f64::min);
        record.alternates = alternates(&def, &info, &meta.problem_size, &logged.records, &best_key)
            .into_iter()
            .filter(|_| best_search.is_finite())
            .map(|(config, t)| kw_core::wisdom::Alternate {
                config,
                median_ms: ms * t / best_search,
            })
            .collect();
    }
    record.objective.confirmation = confirmed.map(|c| c.confirmation);
    if let Some(o) = &objective {
        record.objective.name = Some(o.name.clone());
        record.objective.value = Some(o.score(*score));
        record.objective.maximize = o.maximize;
    }
    let (path, outcome) = add_record(
        &args.wisdom_dir()?,
        &def.tuning_key,
        record,
        ReplacePolicy::IfBetter,
    )?;
    println!("  wisdom: {} ({outcome})", path.display());
    Ok(Outcome {
        reason: report.reason,
        wrote_wisdom: true,
        dropped,
    })
}

/// How many alternates a record keeps, and how much slower than the best they may be.
const ALTERNATES: usize = 8;
const ALTERNATE_SLOWDOWN: f64 = 1.5;

/// A record's alternates ([`kw_core::wisdom::WisdomRecord::alternates`]) from a run's results:
/// the fastest configuration of each launch grid other than the best's (the selection takes
/// an alternate where its blocks spread more evenly than the record's; configurations of one
/// grid spread alike), at most [`ALTERNATES`], each between the best's search time and
/// [`ALTERNATE_SLOWDOWN`] times it, with their search times.
fn alternates(
    def: &kw_core::kernel_def::KernelDef,
    info: &kw_core::device::DeviceInfo,
    problem_size: &[i64],
    results: &[kw_tune::log::LogRecord],
    best_key: &str,
) -> Vec<(kw_core::config::Config, f64)> {
    let ps = [
        problem_size.first().copied().unwrap_or(1),
        problem_size.get(1).copied().unwrap_or(1),
        problem_size.get(2).copied().unwrap_or(1),
    ];
    let grid = |c: &kw_core::config::Config| {
        def.geometry(c, &ps, None, Some(info))
            .ok()
            .map(|g| g.grid.iter().map(|&b| u64::from(b)).product::<u64>())
    };
    let mut fastest: Vec<(&kw_tune::log::LogRecord, f64)> = results
        .iter()
        .filter_map(|r| Some((r, r.objective?)))
        .collect();
    fastest.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some(best) = fastest.iter().find(|(r, _)| r.key == best_key) else {
        return Vec::new();
    };
    let (best_grid, best_t) = (grid(&best.0.config), best.1);
    let mut grids = vec![best_grid];
    let mut out = Vec::new();
    for (r, t) in fastest {
        if out.len() == ALTERNATES || t > ALTERNATE_SLOWDOWN * best_t {
            break;
        }
        // Only configurations the search found slower than the record's: one it found faster
        // was passed over by the confirmation (or is not the configuration in use), and as an
        // alternate it would be taken back at every size but this one.
        if t < best_t {
            continue;
        }
        let g = grid(&r.config);
        if r.key == best_key || g.is_none() || grids.contains(&g) {
            continue;
        }
        grids.push(g);
        out.push((r.config.clone(), t));
    }
    out
}

/// An evaluator borrowed no longer than it lives (so that the wrappers of the chain above
/// borrow each other only as long as the run uses them).
fn shorten<'s>(e: &'s mut (dyn Evaluator + '_)) -> &'s mut (dyn Evaluator + 's) {
    e
}

/// Why this run is unverified (`None`: every written buffer is checked against the
/// capture's reference). A capture without a full reference is refused unless the user asked
/// for an unverified run (`--allow-unverified`, or `--no-verify`, which turns checking off).
fn unverified_reason(
    args: &TuneArgs,
    capture: &Path,
    meta: &kw_core::capture_meta::CaptureMetadata,
) -> Result<Option<String>> {
    if args.no_verify {
        return Ok(Some(
            "--no-verify: outputs not compared with the captured reference".into(),
        ));
    }
    match kw_replay::reference_gap(meta) {
        Some(gap) if !args.allow_unverified => bail!(
            "{}: refusing to tune without a reference: {gap}, so a configuration that \
             computes wrong results could win. Re-capture the launch with this version (it \
             records every Out/InOut buffer), or pass --allow-unverified to tune it anyway \
             (the summary and the wisdom record then say UNVERIFIED)",
            capture.display()
        ),
        gap => Ok(gap),
    }
}

/// The configuration every run starts with and compares against: the default, or, when a
/// restriction over the problem size or arguments makes the default invalid at the captured
/// launch, the first configuration valid there (said on standard error). No valid
/// configuration at all is an error.
fn reference_point(
    space: &kw_core::space::TuningSpace,
    def: &kw_core::kernel_def::KernelDef,
    meta: &kw_core::capture_meta::CaptureMetadata,
) -> Result<kw_core::space::Point> {
    let default = space
        .point(&def.default_config())
        .map_err(anyhow::Error::msg)?;
    if space.contains(&default) {
        return Ok(default);
    }
    let Some(first) = space.point_at(0) else {
        bail!(
            "kernel `{}`: no configuration is valid at the captured problem size {:?} (its \
             restrictions over the problem size or arguments exclude every one)",
            def.kernel_name,
            meta.problem_size
        );
    };
    eprintln!(
        "kw tune: the default configuration is not valid at the captured problem size {:?} \
         ({}); starting from and comparing with {{{}}} instead",
        meta.problem_size,
        space
            .violations(&default)
            .map(|v| format!("it breaks {}", v.join(", ")))
            .unwrap_or_else(|e| e.to_string()),
        space.config(&first)
    );
    Ok(first)
}

/// The message for a capture whose own configuration does not reproduce its reference.
fn inconsistent_capture(meta: &kw_core::capture_meta::CaptureMetadata, reason: &str) -> String {
    format!(
        "the capture is inconsistent: the configuration it was captured with, {{{}}}, does \
         not reproduce the captured output ({reason}), so every configuration would fail \
         verification; stopped. Possible causes: a buffer was captured shorter than the \
         kernel reads it (a declared length too short; captures of earlier versions were cut \
         to the declared or default length: re-capture); the captured launch used a \
         configuration that is not valid at its problem size (declare the restriction over \
         the problem size, and the launch is refused or served by a valid configuration); the \
         kernel writes outside its buffers, reads memory that is not an argument, or is not \
         deterministic; or the tolerance is too strict for this kernel (--rtol/--atol)",
        meta.config
    )
}
