use super::record::{trim_ones, WisdomRecord};
use std::fmt;

/// What the runtime selects for.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// Device name (or the `KW_DEVICE_NAME` override).
    pub device_name: String,
    /// Architecture (`sm_90`, ...).
    pub architecture: String,
    /// Backend (`cuda` / `opencl`); empty matches any backend at step 4.
    pub backend: String,
    /// The launch's problem size.
    pub problem_size: Vec<i64>,
}

/// The step of the selection that decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// Same device name, exact problem size.
    ExactDeviceExactSize = 1,
    /// Same device name, nearest problem size.
    DeviceNearestSize = 2,
    /// Same architecture, nearest problem size.
    ArchitectureNearestSize = 3,
    /// Same backend, nearest problem size.
    BackendNearestSize = 4,
    /// No usable record: the default configuration.
    Default = 5,
}

impl Step {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Step::ExactDeviceExactSize => "same device, exact problem size",
            Step::DeviceNearestSize => "same device, nearest problem size",
            Step::ArchitectureNearestSize => "same architecture, nearest problem size",
            Step::BackendNearestSize => "same backend, nearest problem size",
            Step::Default => "no usable record: default configuration",
        }
    }
}

/// The outcome of [`select`], with what it considered (for `kw wisdom explain` and debug logs).
#[derive(Clone, Debug)]
pub struct Selection {
    /// The deciding step.
    pub step: Step,
    /// Index of the chosen record (`None` at [`Step::Default`]).
    pub record: Option<usize>,
    /// Its log-scale distance to the query's problem size.
    pub distance: f64,
    /// Records skipped, with the reason (stale configuration, ...).
    pub skipped: Vec<(usize, String)>,
    /// Per step 1-4: how many usable records matched it.
    pub candidates: [usize; 4],
    /// Set when the nearest record was passed over because its configuration would leave
    /// much of the device idle at this size ([`select_filling`]).
    pub fill_note: Option<FillNote>,
}

/// Why the fill rule of [`select_filling`] passed over the nearest record.
#[derive(Clone, Debug, PartialEq)]
pub struct FillNote {
    /// Index of the nearest record.
    pub nearest: usize,
    /// The share of the compute units its configuration keeps busy at the query's size.
    pub nearest_here: f64,
    /// ... and at its own size.
    pub nearest_own: f64,
    /// Index of the record taken instead.
    pub taken: usize,
    /// The share its configuration keeps busy at the query's size.
    pub taken_here: f64,
}

impl FillNote {
    /// What happened, in words, numbering record `i` `#number(i)` (its position in its file).
    pub fn describe(&self, records: &[WisdomRecord], number: impl Fn(usize) -> usize) -> String {
        format!(
            "the nearest record #{} (problem size {}) would keep {:.0}% of the compute units busy here against {:.0}% at its own size; record #{} (problem size {}) keeps {:.0}%",
            number(self.nearest),
            size_text(&records[self.nearest].problem_size),
            100.0 * self.nearest_here,
            100.0 * self.nearest_own,
            number(self.taken),
            size_text(&records[self.taken].problem_size),
            100.0 * self.taken_here
        )
    }
}

/// How much of the device a record's configuration keeps busy at a problem size: the fraction
/// of compute units (multiprocessors) that get at least one work-group, `min(1, blocks /
/// compute units)`; `None` when unknown. The runtime computes it from the kernel's launch
/// geometry ([`select_filling`]).
pub type Fill<'a> = dyn Fn(&WisdomRecord, &[i64]) -> Option<f64> + 'a;

/// A record's configuration "keeps its fill" at a size when it keeps at least this share of the
/// fill it had at its own tuned size (below it, a large part of the device it was tuned to use
/// would sit idle).
pub const KEEP_FILL: f64 = 0.75;

/// Distance between problem sizes: the sum over dimensions of `|ln a - ln b|` (missing
/// dimensions count as 1; sizes below 1 count as 1).
pub fn log_distance(a: &[i64], b: &[i64]) -> f64 {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = a.get(i).copied().unwrap_or(1).max(1) as f64;
            let y = b.get(i).copied().unwrap_or(1).max(1) as f64;
            (x.ln() - y.ln()).abs()
        })
        .sum()
}

/// The order of records for a query of problem size `q`, as a key to sort by (smaller
/// first): the log distance; at equal distance (to rounding: 2^24 and 2^26 are equally far
/// from 2^25, but their logarithms' differences need not round alike; and a size in the middle
/// of a grid of records is as far from several), the problem whose volume (the product of its
/// axes: a GEMM's work, a grid's cells) is nearer the query's on a log scale, then the larger
/// problem (its configuration was tuned where the device is full; the fill rule of
/// [`select_filling`] catches the case where it would not be here). Each term is rounded to
/// a millionth, so that equal is transitive (a sort needs a total order).
fn nearness(r: &WisdomRecord, q: &[i64]) -> (i64, i64, i64) {
    // ln of a volume: the log distance from the empty size (all 1s).
    let volume = |size: &[i64]| log_distance(size, &[]);
    let (v, vq) = (volume(&r.problem_size), volume(q));
    (
        rounded(log_distance(&r.problem_size, q)),
        rounded((v - vq).abs()),
        -rounded(v),
    )
}

/// `x` in millionths (log distances of sizes below 2^63 stay far below `i64::MAX`).
fn rounded(x: f64) -> i64 {
    (x * 1e6).round() as i64
}

/// Says whether a record matches one selection step.
type Matcher<'a> = dyn Fn(&WisdomRecord) -> bool + 'a;

/// Which of several wisdom files' selections decides (the files of a search path, in order):
/// the one whose match comes at the earliest step, the earlier file on ties; `None` when there
/// are none. The runtime and `kw wisdom explain` choose by it.
pub fn earliest_step(selections: &[Selection]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, s) in selections.iter().enumerate() {
        if best.is_none_or(|b| s.step < selections[b].step) {
            best = Some(i);
        }
    }
    best
}

/// Selects the record for `query` among `records`. `usable` says whether a record may be used
/// (for the runtime: its configuration is valid in the current space); records it refuses, and
/// records with a defect ([`WisdomRecord::defect`], e.g. a negative time), are skipped with the
/// reason. Equal log distances go to the problem whose volume is nearer the query's, then to the
/// larger problem, then to the faster record, then to the earlier one in the file.
pub fn select(
    records: &[WisdomRecord],
    query: &Query,
    usable: impl FnMut(&WisdomRecord) -> Result<(), String>,
) -> Selection {
    select_filling(records, query, usable, None)
}

/// [`select`], and when the launch geometry is known (`fill`), one more rule at the
/// nearest-size steps 2-4: if the nearest record's configuration would not keep its fill at
/// the query's size (it keeps less than [`KEEP_FILL`] of the fill it had at its own size, e.g.
/// 79 blocks for 132 multiprocessors where it had 128), the first of the records as near, then
/// of those at the next distance, whose configuration keeps its own fill and fills more of the
/// device is chosen.
/// A configuration tuned where it filled the device is then not carried to a size where most
/// of the device would idle, while the nearest record still decides whenever it fits.
pub fn select_filling(
    records: &[WisdomRecord],
    query: &Query,
    mut usable: impl FnMut(&WisdomRecord) -> Result<(), String>,
    fill: Option<&Fill<'_>>,
) -> Selection {
    let mut skipped = Vec::new();
    let ok: Vec<usize> = (0..records.len())
        .filter(|&i| {
            let axes = |r: &WisdomRecord| {
                let n = trim_ones(&r.problem_size).len();
                if !query.problem_size.is_empty() && n > query.problem_size.len() {
                    Err(format!(
                        "its problem size {:?} has {n} axes, the kernel's has {}",
                        r.problem_size,
                        query.problem_size.len()
                    ))
                } else {
                    Ok(())
                }
            };
            let verdict = usable(&records[i])
                .and_then(|()| records[i].defect().map_or(Ok(()), Err))
                .and_then(|()| axes(&records[i]));
            match verdict {
                Ok(()) => true,
                Err(why) => {
                    skipped.push((i, why));
                    false
                }
            }
        })
        .collect();
    let q_size = trim_ones(&query.problem_size);
    // Every step stays within the query's backend (a CUDA record never configures an OpenCL
    // launch of a device that happens to have the same name).
    let backend = |r: &WisdomRecord| query.backend.is_empty() || r.device.backend == query.backend;
    let steps: [(Step, &Matcher); 4] = [
        (Step::ExactDeviceExactSize, &|r| {
            backend(r) && r.device.name == query.device_name && trim_ones(&r.problem_size) == q_size
        }),
        (Step::DeviceNearestSize, &|r| {
            backend(r) && r.device.name == query.device_name
        }),
        (Step::ArchitectureNearestSize, &|r| {
            backend(r)
                && !query.architecture.is_empty()
                && r.device.architecture == query.architecture
        }),
        (Step::BackendNearestSize, &|r| backend(r)),
    ];
    let mut candidates = [0usize; 4];
    let mut chosen = None;
    let mut fill_note = None;
    for (si, (step, matches)) in steps.iter().enumerate() {
        let mut matching: Vec<usize> = ok
            .iter()
            .copied()
            .filter(|&i| matches(&records[i]))
            .collect();
        candidates[si] = matching.len();
        if chosen.is_some() {
            continue;
        }
        let key = |i: usize| nearness(&records[i], &query.problem_size);
        let order = |&a: &usize, &b: &usize| {
            let (sa, sb) = records[a].objective.scores(&records[b].objective);
            key(a).cmp(&key(b)).then(sa.total_cmp(&sb)).then(a.cmp(&b))
        };
        if fill.is_some() {
            // The fill rule looks past the nearest: the whole order.
            matching.sort_by(order);
        } else if let Some(first) = matching.iter().copied().min_by(order) {
            // Only the nearest is used: found in one pass (a report's selection maps ask
            // thousands of sizes of a file of thousands of records).
            matching = vec![first];
        }
        if let Some(&nearest) = matching.first() {
            let mut pick = nearest;
            let nearest_step = *step != Step::ExactDeviceExactSize;
            if let (Some(fill), true) = (fill, nearest_step) {
                if let Some((second, note)) = fill_rule(records, query, &matching, fill) {
                    pick = second;
                    fill_note = Some(note);
                }
            }
            chosen = Some((*step, pick));
        }
    }
    match chosen {
        Some((step, i)) => Selection {
            step,
            record: Some(i),
            distance: log_distance(&records[i].problem_size, &query.problem_size),
            skipped,
            candidates,
            fill_note,
        },
        None => Selection {
            step: Step::Default,
            record: None,
            distance: 0.0,
            skipped,
            candidates,
            fill_note,
        },
    }
}

/// The fill rule of [`select_filling`] on the records of one step, nearest first: the record
/// it takes instead and why, when the rule passes over the nearest.
fn fill_rule(
    records: &[WisdomRecord],
    query: &Query,
    by_distance: &[usize],
    fill: &Fill<'_>,
) -> Option<(usize, FillNote)> {
    let &first = by_distance.first()?;
    // (fill at the query's size, fill at the record's own size)
    let fills = |i: usize| -> Option<(f64, f64)> {
        let r = &records[i];
        Some((fill(r, &query.problem_size)?, fill(r, &r.problem_size)?))
    };
    let (near_here, near_own) = fills(first)?;
    if near_here >= KEEP_FILL * near_own {
        return None;
    }
    // The records as near as the nearest, then those at the next distance (in their order):
    // the first that keeps its own fill and fills more of the device than the nearest would.
    // (Not farther: a record of a much smaller problem keeps its small fill anywhere.)
    let d = |i: usize| rounded(log_distance(&records[i].problem_size, &query.problem_size));
    let next = by_distance[1..]
        .iter()
        .map(|&i| d(i))
        .find(|&x| x > d(first));
    let second = by_distance[1..]
        .iter()
        .copied()
        .take_while(|&i| next.is_none_or(|n| d(i) <= n))
        .find(|&i| {
            fills(i).is_some_and(|(here, own)| here >= KEEP_FILL * own && here > near_here)
        })?;
    let (second_here, _) = fills(second)?;
    Some((
        second,
        FillNote {
            nearest: first,
            nearest_here: near_here,
            nearest_own: near_own,
            taken: second,
            taken_here: second_here,
        },
    ))
}

/// Formats a problem size as `4096x4096x1`.
pub(crate) fn size_text(size: &[i64]) -> String {
    if size.is_empty() {
        return "(none)".into();
    }
    size.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} ({})", *self as u8, self.describe())
    }
}

/// A newcomer-readable account of a selection (what `kw wisdom explain` prints), numbering the
/// records `#1`, `#2`, ... in the order of `records`.
pub fn explain(records: &[WisdomRecord], query: &Query, selection: &Selection) -> String {
    let numbers: Vec<usize> = (1..=records.len()).collect();
    explain_numbered(records, &numbers, query, selection)
}

/// [`explain`], numbering record `i` `#numbers[i]` (its position in its file,
/// [`super::WisdomFile::record_numbers`], where records were rejected when it was loaded);
/// `#i+1` where `numbers` has no entry for it.
pub fn explain_numbered(
    records: &[WisdomRecord],
    numbers: &[usize],
    query: &Query,
    selection: &Selection,
) -> String {
    use std::fmt::Write;
    let number = |i: usize| numbers.get(i).copied().unwrap_or(i + 1);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "query: device \"{}\" (architecture {}, backend {}), problem size {}",
        query.device_name,
        if query.architecture.is_empty() {
            "any"
        } else {
            &query.architecture
        },
        if query.backend.is_empty() {
            "any"
        } else {
            &query.backend
        },
        size_text(&query.problem_size)
    );
    let steps = [
        Step::ExactDeviceExactSize,
        Step::DeviceNearestSize,
        Step::ArchitectureNearestSize,
        Step::BackendNearestSize,
    ];
    for (i, step) in steps.iter().enumerate() {
        let mark = if selection.step == *step {
            "   <- chosen"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  step {}, {}: {} usable record(s){mark}",
            i + 1,
            step.describe(),
            selection.candidates[i]
        );
    }
    if let Some(note) = &selection.fill_note {
        let _ = writeln!(s, "fill rule: {}", note.describe(records, number));
    }
    match selection.record {
        Some(i) => {
            let r = &records[i];
            let _ = writeln!(
                s,
                "chosen: record #{} at step {}, tuned for problem size {} on \"{}\" ({}, {}), distance {:.3} (sum of |ln| per dimension)",
                number(i),
                selection.step as u8,
                size_text(&r.problem_size),
                r.device.name,
                r.device.architecture,
                r.device.backend,
                selection.distance
            );
            let _ = writeln!(s, "  configuration: {}", r.config.key());
            // Axes as written (a size of [1] has one), trailing axes of 1 aside.
            let written = |size: &[i64]| trim_ones(size).len().max(size.len().min(1));
            let (given, asked) = (written(&r.problem_size), written(&query.problem_size));
            if given < asked {
                let axes = |n: usize| format!("{n} ax{}", if n == 1 { "is" } else { "es" });
                let _ = writeln!(
                    s,
                    "  note: its problem size has {} where the query's has {}: the missing axes count as 1",
                    axes(given),
                    axes(asked)
                );
            }
            let _ = writeln!(
                s,
                "  measured: {} ms (median of {} samples); tuned {} by strategy {} in {} evaluations",
                crate::diag::figure(r.objective.median_ms),
                r.objective.samples,
                if r.provenance.date.is_empty() { "(date unknown)" } else { &r.provenance.date },
                if r.provenance.strategy.is_empty() { "?" } else { &r.provenance.strategy },
                r.provenance.evaluations
            );
            match r.provenance.verified {
                Some(false) => {
                    let _ = writeln!(s, "  UNVERIFIED: {}", r.provenance.unverified_reason);
                }
                _ if !r.provenance.tolerances.is_empty() => {
                    let list: Vec<String> = r
                        .provenance
                        .tolerances
                        .iter()
                        .map(|(b, t)| format!("`{b}` ({t})"))
                        .collect();
                    let _ = writeln!(s, "  verified: {}", list.join(", "));
                }
                _ => {}
            }
        }
        None => {
            let _ = writeln!(
                s,
                "chosen: the default configuration (step 5): no usable record matched"
            );
        }
    }
    for (i, why) in &selection.skipped {
        let _ = writeln!(s, "skipped: record #{}: {why}", number(*i));
    }
    s
}
