//! The single launches of an online run while its tuning ran, against the same launches of
//! the run without tuning: percentiles, the delay over the median launch without tuning
//! against the longest run of one candidate (the bar: no launch delayed by more than one
//! candidate's run), a histogram, and the slowest launches next to the job's events.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// One online run and the run without tuning before it.
pub struct Run<'a> {
    /// Its number (from 1).
    pub index: usize,
    /// Each launch's time and start (seconds from the loop's start), in order.
    pub online: &'a [(f64, f64)],
    /// Each launch's time without tuning.
    pub off: &'a [f64],
    /// The launch from which the tuned configuration was in use.
    pub switched: Option<usize>,
    /// The longest run of one candidate, seconds.
    pub candidate: Option<f64>,
    /// The job's events: what, and when (seconds from the loop's start).
    pub events: Vec<(String, f64)>,
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Launch counts by time over `base`: up to 1.25x, 2x, 4x, 8x, more.
fn histogram(times: &[f64], base: f64) -> [usize; 5] {
    let mut h = [0; 5];
    for t in times {
        let r = t / base;
        let bucket = [1.25, 2.0, 4.0, 8.0]
            .iter()
            .position(|&edge| r <= edge)
            .unwrap_or(4);
        h[bucket] += 1;
    }
    h
}

/// Prints the run's lines.
pub fn report(r: &Run<'_>) {
    let until = r
        .switched
        .map_or(r.online.len(), |s| s.saturating_sub(1))
        .min(r.online.len())
        .min(r.off.len());
    if until < 2 {
        println!("online run {}: no launch ran while the tuning ran", r.index);
        return;
    }
    let on: Vec<f64> = r.online[1..until].iter().map(|(t, _)| *t).collect();
    let off = &r.off[1..until];
    let (so, sf) = (sorted(&on), sorted(off));
    let base = pct(&sf, 0.5);
    let ms = |s: f64| s * 1e3;
    println!(
        "online run {}: single launches 2 to {until} (while the tuning ran), ms: median {:.3}, \
         p99 {:.3}, max {:.3}; the same launches without tuning: median {:.3}, p99 {:.3}, \
         max {:.3}",
        r.index,
        ms(pct(&so, 0.5)),
        ms(pct(&so, 0.99)),
        ms(pct(&so, 1.0)),
        ms(base),
        ms(pct(&sf, 0.99)),
        ms(pct(&sf, 1.0)),
    );
    let (d99, dmax) = (pct(&so, 0.99) - base, pct(&so, 1.0) - base);
    let bar = match r.candidate {
        Some(c) => format!(
            "longest run of one candidate {:.3} ms: largest delay {:.2}x it, {}",
            ms(c),
            dmax / c,
            if dmax <= c {
                "within the bar"
            } else {
                "over the bar"
            }
        ),
        None => "no candidate run was logged".into(),
    };
    println!(
        "  delay over the median launch without tuning: p99 {:+.3} ms, max {:+.3} ms \
         (without tuning: p99 {:+.3} ms, max {:+.3} ms); {bar}",
        ms(d99),
        ms(dmax),
        ms(pct(&sf, 0.99) - base),
        ms(pct(&sf, 1.0) - base),
    );
    let (ho, hf) = (histogram(&on, base), histogram(off, base));
    println!(
        "  launches by time over that median (<=1.25x, <=2x, <=4x, <=8x, >8x): online {ho:?}; \
         without tuning {hf:?}"
    );
    let mut slowest: Vec<(usize, f64, f64)> = r.online[1..until]
        .iter()
        .enumerate()
        .map(|(i, (t, at))| (i + 2, *t, *at))
        .collect();
    slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
    let list: Vec<String> = slowest
        .iter()
        .take(5)
        .map(|(i, t, at)| format!("{i}: {:.3} ms at {at:.3} s", ms(*t)))
        .collect();
    println!("  slowest online launches: {}", list.join(", "));
    if !r.events.is_empty() {
        let list: Vec<String> = r
            .events
            .iter()
            .map(|(what, at)| format!("{what} at {at:.3} s"))
            .collect();
        println!("  job: {}", list.join(", "));
    }
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// When the job's files were made, seconds from the loop's start (`start_unix`): the
/// capture (written), `kw tune`'s output (created when it starts) and its results log.
pub fn job_events(job: &Path, start_unix: f64) -> Vec<(String, f64)> {
    let Ok(entries) = std::fs::read_dir(job) else {
        return Vec::new();
    };
    let mut events = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let Ok(meta) = p.metadata() else { continue };
        let created = meta.created().or_else(|_| meta.modified());
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let what = match name.as_deref() {
            Some(n) if n.ends_with(".kwcap") => ("capture written", meta.modified()),
            Some("tune.out") => ("`kw tune` started", created),
            Some("tune.jsonl") => ("results log started", created),
            _ => continue,
        };
        if let Ok(t) = what.1 {
            events.push((what.0.to_string(), unix(t) - start_unix));
        }
        if name.as_deref() == Some("tune.jsonl") {
            if let Ok(t) = meta.modified() {
                events.push(("results log last written".into(), unix(t) - start_unix));
            }
        }
    }
    events.sort_by(|a, b| a.1.total_cmp(&b.1));
    events
}
