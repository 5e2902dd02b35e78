//! A tuning run's section, from its results log: best so far against evaluations and wall
//! time, the distribution of configuration times (default and winner marked), how many
//! configurations lie near the best, time by value of each parameter, failures by kind.

use super::html::Page;
use super::svg::{self, Axes, Mark, Series};
use anyhow::Result;
use kw_tune::log::{LogContents, LogRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// What kind of failure a log's reason is (the evaluators' reasons start with these words).
pub fn failure_kind(reason: &str) -> &'static str {
    let r = reason.trim_start();
    if r.starts_with("compile failed") {
        "compile"
    } else if r.starts_with("wrong result") || r.contains("out of bounds") || r.contains("guard") {
        "verification"
    } else if r.starts_with("timed out") || r.starts_with("the run's time is up") {
        "time-out"
    } else if r.starts_with("crashed") {
        "crash"
    } else if r.starts_with("launch failed") {
        "launch"
    } else if r.starts_with("invalid configuration") {
        "invalid configuration"
    } else {
        "other"
    }
}

/// Counts of successful configurations within 1, 5 and 10% of `best` (lower is better; a
/// maximised objective's scores are negative: within `f |best|` of it).
pub fn near_best(times: &[f64], best: f64) -> [usize; 3] {
    let within = |f: f64| {
        times
            .iter()
            .filter(|&&t| t <= best + f * best.abs())
            .count()
    };
    [within(0.01), within(0.05), within(0.10)]
}

/// Best so far after each successful evaluation: `(x, best)` where x is chosen by `x_of`.
fn best_so_far(records: &[LogRecord], x_of: impl Fn(&LogRecord) -> f64) -> Vec<(f64, f64)> {
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for r in records {
        if let Some(v) = r.objective.filter(|v| v.is_finite()) {
            if v < best {
                best = v;
                out.push((x_of(r), v));
            }
        }
    }
    // The curve goes on to the last evaluation.
    if let (Some(last), Some(&(_, b))) = (records.last(), out.last()) {
        out.push((x_of(last), b));
    }
    out
}

/// Adds the section of one results log.
pub fn section(page: &mut Page, path: &Path, log: &LogContents) -> Result<()> {
    let h = &log.header;
    let kernel = h.kernel_name.as_deref().unwrap_or("unnamed kernel");
    page.section(&format!("Tuning run: {kernel} ({})", path.display()));
    let score_unit;
    let unit = if h.objective == "time" {
        "ms"
    } else if h.maximize {
        // The log holds scores: the values negated, so that lower is better throughout.
        score_unit = format!("(score: {} negated, maximised)", h.objective);
        score_unit.as_str()
    } else {
        h.objective.as_str()
    };
    let records = &log.records;
    let ok: Vec<&LogRecord> = records.iter().filter(|r| r.objective.is_some()).collect();
    let times: Vec<f64> = ok.iter().filter_map(|r| r.objective).collect();
    let best = ok.iter().min_by(|a, b| {
        a.objective
            .partial_cmp(&b.objective)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let default = h
        .default_key
        .as_ref()
        .and_then(|k| records.iter().find(|r| &r.key == k));
    let size = h
        .problem_size
        .as_ref()
        .map(|s| {
            s.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x")
        })
        .unwrap_or_else(|| "not recorded".into());
    let wall = records.iter().map(|r| r.elapsed_s).fold(0.0, f64::max);
    let mut facts = vec![
        vec![
            "device".into(),
            h.device_name
                .clone()
                .unwrap_or_else(|| "not recorded".into()),
        ],
        vec!["problem size".into(), size],
        vec![
            "strategy".into(),
            h.strategy.clone().unwrap_or_else(|| "not recorded".into()),
        ],
        vec!["evaluations".into(), records.len().to_string()],
        vec!["succeeded".into(), ok.len().to_string()],
        vec!["wall time".into(), format!("{wall:.2} s")],
    ];
    match best {
        Some(b) => facts.push(vec![
            "best".into(),
            format!(
                "{:.4} {unit} ({})",
                b.objective.unwrap_or(f64::NAN),
                b.config.key()
            ),
        ]),
        None => facts.push(vec!["best".into(), "no configuration succeeded".into()]),
    }
    match (default, h.default_key.as_ref()) {
        (Some(d), _) => facts.push(vec![
            "default".into(),
            match (d.objective, &d.failure) {
                (Some(v), _) => format!("{v:.4} {unit} ({})", d.config.key()),
                (None, Some(f)) => format!("failed: {f}"),
                (None, None) => "no result".into(),
            },
        ]),
        (None, Some(_)) => facts.push(vec!["default".into(), "not evaluated in this log".into()]),
        (None, None) => facts.push(vec![
            "default".into(),
            "not recorded (a log written before default keys were logged)".into(),
        ]),
    }
    if let (Some(b), Some(d)) = (
        best.and_then(|b| b.objective),
        default.and_then(|d| d.objective),
    ) {
        // A maximised objective's scores are its values negated: the ratio of the values is
        // that of their reciprocals as times.
        let (d, b) = if h.maximize {
            (-1.0 / d, -1.0 / b)
        } else {
            (d, b)
        };
        facts.push(vec![
            "best against default".into(),
            super::ratio_words(d, b),
        ]);
    }
    page.table(&["", ""], &facts);
    if !log.dropped.is_empty() {
        page.note(&format!(
            "{} malformed line(s) of the log, or with values no evaluation can have (an \
             objective, a time), were left out.",
            log.dropped.len()
        ));
    }
    // Times are drawn on linear and logarithmic axes (where only positive ones can be).
    let objectives_left_out = times
        .iter()
        .filter(|&&v| !svg::drawable(v, false) || (v > 0.0 && !svg::drawable(v, true)))
        .count();
    if h.maximize {
        page.note(&format!(
            "The objective is maximised: the log holds its scores, {} negated, and the figures \
             draw them as they are (lower is better); the histogram's logarithmic bins take \
             positive values only and leave the scores out.",
            h.objective
        ));
    }
    let walls_left_out = records
        .iter()
        .filter(|r| !svg::drawable(r.elapsed_s, false))
        .count();
    for note in [
        svg::left_out_note(objectives_left_out, "objective value(s) are"),
        svg::left_out_note(walls_left_out, "wall time(s) are"),
    ]
    .into_iter()
    .flatten()
    {
        page.note(&note);
    }
    if let Some(b) = best.and_then(|b| b.objective) {
        let curve = |x_of: &dyn Fn(&LogRecord) -> f64| best_so_far(records, x_of);
        let by_eval = Series {
            name: "best so far".into(),
            points: curve(&|r| r.eval as f64),
            colour: 0,
            steps: true,
            dots: true,
        };
        page.figure(
            &svg::lines(
                "Best so far by evaluation",
                "evaluations",
                unit,
                &[by_eval],
                Axes::default(),
            )?,
            "The best objective found after each evaluation (failed evaluations count).",
        );
        let by_time = Series {
            name: "best so far".into(),
            points: curve(&|r| r.elapsed_s),
            colour: 0,
            steps: true,
            dots: true,
        };
        page.figure(
            &svg::lines(
                "Best so far by wall time",
                "seconds",
                unit,
                &[by_time],
                Axes::default(),
            )?,
            "The same against the run's wall time (seconds since the start).",
        );
        let mut marks = vec![Mark {
            name: "best".into(),
            at: b,
            colour: 2,
        }];
        if let Some(d) = default.and_then(|d| d.objective) {
            marks.push(Mark {
                name: "default".into(),
                at: d,
                colour: 3,
            });
        }
        page.figure(
            &svg::histogram("Configuration times", unit, &times, &marks)?,
            "How many configurations took each time (logarithmic bins); the default and the best marked.",
        );
        let [p1, p5, p10] = near_best(&times, b);
        page.table(
            &[
                "within the best",
                "configurations",
                "of those that succeeded",
            ],
            &[(1, p1), (5, p5), (10, p10)]
                .iter()
                .map(|&(pct, n)| {
                    vec![
                        format!("{pct}%"),
                        n.to_string(),
                        format!("{:.1}%", 100.0 * n as f64 / times.len().max(1) as f64),
                    ]
                })
                .collect::<Vec<_>>(),
        );
        page.heading("Time by value of each parameter");
        for (pi, p) in h.params.iter().enumerate() {
            let labels: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
            let points: Vec<(usize, f64)> = ok
                .iter()
                .filter_map(|r| Some((*r.point.get(pi)? as usize, r.objective?)))
                .collect();
            page.figure(
                &svg::strip(&p.name, unit, &labels, &points)?,
                &format!(
                    "{}: each dot a configuration; the bar the best at each value.",
                    p.name
                ),
            );
        }
    }
    failures(page, records)?;
    Ok(())
}

/// The failures by kind: counts, a chart and an example of each.
fn failures(page: &mut Page, records: &[LogRecord]) -> Result<()> {
    let mut kinds: BTreeMap<&str, (usize, &LogRecord)> = BTreeMap::new();
    for r in records {
        if let Some(f) = &r.failure {
            kinds.entry(failure_kind(f)).or_insert((0, r)).0 += 1;
        }
    }
    page.heading("Failures");
    if kinds.is_empty() {
        page.para("No configuration failed.");
        return Ok(());
    }
    let items: Vec<(String, f64)> = kinds
        .iter()
        .map(|(k, (n, _))| (k.to_string(), *n as f64))
        .collect();
    page.figure(
        &svg::bars("Failures by kind", "configurations", &items)?,
        "Failed evaluations by kind.",
    );
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|(k, (n, r))| {
            let reason = r.failure.as_deref().unwrap_or("");
            let short: String = reason.chars().take(300).collect();
            vec![k.to_string(), n.to_string(), r.config.key(), short]
        })
        .collect();
    page.table(
        &["kind", "count", "example configuration", "its reason"],
        &rows,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_sorted_into_kinds() {
        assert_eq!(failure_kind("compile failed: x.cl:3: error"), "compile");
        assert_eq!(
            failure_kind("wrong result: out[3] = 1, expected 2"),
            "verification"
        );
        assert_eq!(
            failure_kind("timed out: no result within 2.0 s"),
            "time-out"
        );
        assert_eq!(failure_kind("crashed: signal 11"), "crash");
        assert_eq!(failure_kind("launch failed: CL_OUT_OF_RESOURCES"), "launch");
        assert_eq!(failure_kind("something new"), "other");
    }

    #[test]
    fn near_best_counts_include_the_best() {
        assert_eq!(near_best(&[1.0, 1.005, 1.04, 1.08, 2.0], 1.0), [2, 3, 4]);
        // A maximised objective's scores: -100 is best, -99.5 within 1%, -96 within 5%.
        assert_eq!(
            near_best(&[-100.0, -99.5, -96.0, -92.0, -50.0], -100.0),
            [2, 3, 4]
        );
    }
}
