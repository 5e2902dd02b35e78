//! The summary `kw tune` prints after each capture, and the timing report
//! (`--report-timing`): repeat-measurement spread and bandwidth against a device copy.

use kw_core::objective::ObjectiveDef;
use kw_core::{space::Point, space::TuningSpace};
use kw_replay::ReplayStats;
use kw_tune::TuneReport;
use std::collections::BTreeMap;

/// Failures grouped by their reason's category (the text before the first `:`).
pub fn failures_by_reason(report: &TuneReport) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for e in &report.history {
        if let Err(f) = &e.result {
            let cat = f.reason.split(':').next().unwrap_or("").trim().to_string();
            *out.entry(cat).or_insert(0) += 1;
        }
    }
    out
}

/// The objective of `point` in the run, if it was evaluated and succeeded.
pub fn objective_of(report: &TuneReport, point: &Point) -> Option<f64> {
    report
        .history
        .iter()
        .find(|e| &e.point == point)
        .and_then(|e| e.result.as_ref().ok().copied())
}

/// Prints the summary of one tuned capture.
pub fn print_summary(
    kernel: &str,
    space: &TuningSpace,
    report: &TuneReport,
    default: &Point,
    stats: &ReplayStats,
    compile_threads: usize,
    objective: Option<&ObjectiveDef>,
) {
    println!(
        "kernel {}: {} evaluations ({} from the log); stopped: {}",
        kw_core::diag::printable(kernel),
        report.progress.evaluations,
        report.replayed,
        report.reason
    );
    // The search's values are times, or the objective's scores (its value, negated when
    // maximised).
    let shown = |score: f64| match objective {
        Some(o) => format!("{} {}", kw_core::diag::figure(o.score(score)), o.name),
        None => format!("{} ms", kw_core::diag::figure(score)),
    };
    if let Some(o) = objective {
        let way = if o.maximize { "maximised" } else { "minimised" };
        println!("  objective: {} = {} ({way})", o.name, o.expr);
    }
    let default_score = objective_of(report, default);
    match default_score {
        Some(v) => println!(
            "  default configuration: {}  ({})",
            shown(v),
            space.config(default).key()
        ),
        None => println!(
            "  default configuration: failed or not evaluated ({})",
            space.config(default).key()
        ),
    }
    match &report.best {
        Some((p, v)) => {
            println!(
                "  best configuration:    {}  ({})",
                shown(*v),
                space.config(p).key()
            );
            if let Some(d) = default_score {
                // The factor by which the best beats the default (scores of a maximised
                // objective are negated values).
                let factor = if objective.is_some_and(|o| o.maximize) {
                    v / d
                } else {
                    d / v
                };
                println!("  speed-up over default: {factor:.3}x");
            }
        }
        None => println!("  best configuration:    none succeeded"),
    }
    let failures = failures_by_reason(report);
    if failures.is_empty() {
        println!("  failures: none");
    } else {
        let list: Vec<String> = failures.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        println!(
            "  failures: {} ({})",
            report.progress.failures,
            list.join(", ")
        );
    }
    println!(
        "  device busy: {:.1}% of {:.2} s wall ({:.3} s in launches), {:.2} evaluations/s, compile wait {:.2} s, compile CPU {:.2} s",
        100.0 * stats.busy_fraction(),
        stats.wall.as_secs_f64(),
        stats.busy.as_secs_f64(),
        stats.evals_per_second(),
        stats.compile_wait.as_secs_f64(),
        stats.compile_cpu.as_secs_f64(),
    );
    println!("  {}", time_line(stats));
    println!("  {}", limit_line(stats, compile_threads));
}

/// What bounds the run: compile CPU spread over the compile threads, or the device (launches
/// and on-device verification), and the wall time as a multiple of the larger.
pub fn limit_line(s: &ReplayStats, compile_threads: usize) -> String {
    let threads = compile_threads.max(1);
    let compile = s.compile_cpu.as_secs_f64() / threads as f64;
    let device = s.busy.as_secs_f64() + s.verify.as_secs_f64();
    let (larger, which) = if compile >= device {
        (compile, "compile")
    } else {
        (device, "device")
    };
    let ratio = if larger > 0.0 {
        format!("{:.2}x", s.wall.as_secs_f64() / larger)
    } else {
        "-".into()
    };
    format!(
        "limit: compile {:.2} s CPU / {threads} threads = {compile:.2} s, device {:.3} s + \
         verification {:.3} s = {device:.2} s; wall {:.2} s = {ratio} the larger ({which})",
        s.compile_cpu.as_secs_f64(),
        s.busy.as_secs_f64(),
        s.verify.as_secs_f64(),
        s.wall.as_secs_f64(),
    )
}

/// Where the time went: `time: compile ... , device ..., ...; N compiles, M cache hits`.
/// Restores are device-to-device copies enqueued with the launches; they show as host time
/// only where runs are verified one by one (`restore`, shown when non-zero). The evaluation
/// workers' start-up (opening the device, loading the capture) is part of the host time:
/// `host 1.20 s (start 0.45 s)`, shown when non-zero.
pub fn time_line(s: &ReplayStats) -> String {
    let sec = |d: std::time::Duration| d.as_secs_f64();
    let restore = if s.restore.is_zero() {
        String::new()
    } else {
        format!("restore {:.3} s, ", sec(s.restore))
    };
    let start = if s.start.is_zero() {
        String::new()
    } else {
        format!(" (start {:.2} s)", sec(s.start))
    };
    let replaced = match s.cache_replaced {
        0 => String::new(),
        n => format!(" ({n} damaged or refused cache entries recompiled and replaced)"),
    };
    format!(
        "time: compile {:.2} s CPU (waited {:.2} s), cache loads {:.3} s, device {:.3} s, \
         verification {:.3} s ({} of {} runs on the device), {restore}host {:.2} s{start}, \
         of {:.2} s wall; {} compiles, {} cache hits{replaced}",
        sec(s.compile_cpu),
        sec(s.compile_wait),
        sec(s.cache_load),
        sec(s.busy),
        sec(s.verify),
        s.verified_on_device,
        s.verified_runs,
        sec(s.host_time()),
        sec(s.wall),
        s.compiles,
        s.cache_hits
    )
}

/// What `--report-timing` measured.
pub struct TimingReport {
    /// The default configuration's median in the run and measured again at the end.
    pub repeat: Option<(f64, f64)>,
    /// Bytes the kernel moves, and the best configuration's median (ms).
    pub kernel: Option<(u64, f64)>,
    /// Bytes a device-to-device copy moves and its median seconds.
    pub copy: Option<(u64, f64)>,
}

/// Prints the timing report.
pub fn print_timing(t: &TimingReport) {
    if let Some((a, b)) = t.repeat {
        let spread = kw_replay::spread(&[a, b]);
        println!(
            "  repeat: default configuration {a:.4} ms, again {b:.4} ms: spread (max/min - 1) {:.2}%",
            100.0 * spread
        );
    }
    let gbs = |bytes: u64, s: f64| bytes as f64 / s / 1e9;
    if let Some((bytes, ms)) = t.kernel {
        println!(
            "  bandwidth: best configuration moves {bytes} bytes in {ms:.4} ms = {:.2} GB/s",
            gbs(bytes, ms / 1e3)
        );
    }
    if let Some((bytes, s)) = t.copy {
        println!(
            "  device copy: {bytes} bytes (read + write) in {:.4} ms = {:.2} GB/s (host-timed blocking copy)",
            s * 1e3,
            gbs(bytes, s)
        );
        if let Some((kb, ms)) = t.kernel {
            println!(
                "  kernel / copy bandwidth: {:.1}%",
                100.0 * gbs(kb, ms / 1e3) / gbs(bytes, s)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_limit_line_names_the_larger_bound() {
        let s = ReplayStats {
            compile_cpu: Duration::from_secs_f64(16.0),
            busy: Duration::from_secs_f64(0.6),
            verify: Duration::from_secs_f64(0.4),
            wall: Duration::from_secs_f64(2.5),
            ..ReplayStats::default()
        };
        assert_eq!(
            limit_line(&s, 8),
            "limit: compile 16.00 s CPU / 8 threads = 2.00 s, device 0.600 s + verification \
             0.400 s = 1.00 s; wall 2.50 s = 1.25x the larger (compile)"
        );
        let line = limit_line(&s, 32);
        assert!(
            line.ends_with("wall 2.50 s = 2.50x the larger (device)"),
            "{line}"
        );
        assert!(limit_line(&ReplayStats::default(), 0).ends_with("= - the larger (compile)"));
    }
}
