//! A wisdom set's section: coverage (kernel × device × problem size), each record against
//! the default, and what the selection's steps would pick over a grid of problem sizes.

use super::html::{swatch, Page};
use super::svg::{self, Cell};
use anyhow::Result;
use kw_core::wisdom::{select, Query, WisdomFile, WisdomRecord};
use std::path::Path;

/// Grid points per axis of the selection maps.
const GRID: usize = 8;

fn size_text(size: &[i64]) -> String {
    let trimmed = trim_ones(size);
    if trimmed.is_empty() {
        return "1".into();
    }
    trimmed
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// The size without trailing axes of 1.
fn trim_ones(size: &[i64]) -> &[i64] {
    let n = size.iter().rposition(|&v| v != 1).map_or(0, |i| i + 1);
    &size[..n]
}

/// A size in at most about four characters: `512`, `4.1k`, `17M`.
fn short(v: i64) -> String {
    let f = v as f64;
    let (x, unit) = match v.abs() {
        0..=999 => return v.to_string(),
        1_000..=999_999 => (f / 1e3, "k"),
        1_000_000..=999_999_999 => (f / 1e6, "M"),
        _ => (f / 1e9, "G"),
    };
    if x < 10.0 {
        format!("{x:.1}{unit}")
    } else {
        format!("{x:.0}{unit}")
    }
}

/// `n` sizes spaced evenly on a log scale from `lo` to `hi` (at least 1, distinct).
fn log_grid(lo: i64, hi: i64, n: usize) -> Vec<i64> {
    let (a, b) = ((lo.max(1) as f64).ln(), (hi.max(lo).max(1) as f64).ln());
    let mut out: Vec<i64> = (0..n)
        .map(|i| {
            (a + (b - a) * i as f64 / (n - 1).max(1) as f64)
                .exp()
                .round() as i64
        })
        .collect();
    out.dedup();
    out
}

/// Adds the section of one wisdom directory (its files, already loaded).
pub fn section(
    page: &mut Page,
    dir: &Path,
    files: &[(String, WisdomFile)],
    problems: &[String],
) -> Result<()> {
    page.section(&format!("Wisdom: {}", dir.display()));
    for p in problems {
        page.note(p);
    }
    let mut coverage = Vec::new();
    let mut versus = Vec::new();
    for (name, f) in files {
        let mut devices: Vec<&str> = f.records.iter().map(|r| r.device.name.as_str()).collect();
        devices.sort_unstable();
        devices.dedup();
        for d in &devices {
            let sizes: Vec<String> = f
                .records
                .iter()
                .filter(|r| r.device.name == *d)
                .map(|r| size_text(&r.problem_size))
                .collect();
            coverage.push(vec![
                f.tuning_key.clone(),
                d.to_string(),
                sizes.len().to_string(),
                sizes.join(", "),
            ]);
        }
        if f.records.is_empty() {
            coverage.push(vec![
                f.tuning_key.clone(),
                format!("(no records in {name})"),
                "0".into(),
                String::new(),
            ]);
        }
        for r in &f.records {
            versus.push(record_against_default(&f.tuning_key, r));
        }
    }
    page.heading("Coverage");
    page.table(
        &["tuning key", "device", "records", "problem sizes"],
        &coverage,
    );
    page.heading("Tuned against default");
    page.table(
        &[
            "tuning key",
            "device",
            "problem size",
            "configuration",
            "time",
            "default",
            "tuned against default",
        ],
        &versus.iter().map(|v| v.0.clone()).collect::<Vec<_>>(),
    );
    let bars: Vec<(String, f64)> = versus.iter().filter_map(|v| v.1.clone()).collect();
    if bars.is_empty() {
        page.note(
            "No record carries the default's time (records written before kw tune confirmed \
             its winners against the default).",
        );
    } else {
        let left_out = bars.iter().filter(|b| !svg::drawable(b.1, false)).count();
        if let Some(note) = svg::left_out_note(left_out, "speed-up(s) are") {
            page.note(&note);
        }
        page.figure(
            &svg::bars("Speed-up over the default", "default time / tuned time", &bars)?,
            "Per record with a confirmation: the default's median time over the record's (above 1: faster).",
        );
    }
    for (_, f) in files.iter().filter(|(_, f)| !f.records.is_empty()) {
        selection_maps(page, f)?;
    }
    Ok(())
}

/// One row of the tuned-against-default table, and a bar when the default's time is known.
fn record_against_default(key: &str, r: &WisdomRecord) -> (Vec<String>, Option<(String, f64)>) {
    let c = r.objective.confirmation.as_ref();
    let default = c.map_or("not recorded".to_string(), |c| {
        format!("{} ms", kw_core::diag::figure(c.default_median_ms))
    });
    let words = c.map_or("-".to_string(), |c| {
        format!(
            "{} ({}% interval {}-{}, {} rounds)",
            super::ratio_words(c.default_median_ms, c.median_ms),
            (c.confidence * 100.0).round(),
            kw_core::diag::ratio(c.speedup_low),
            kw_core::diag::ratio(c.speedup_high),
            c.rounds
        )
    });
    let row = vec![
        key.to_string(),
        r.device.name.clone(),
        size_text(&r.problem_size),
        r.config.key(),
        format!("{} ms", kw_core::diag::figure(r.objective.median_ms)),
        default,
        words,
    ];
    let bar = c.map(|c| {
        (
            format!("{} {}", r.device.name, size_text(&r.problem_size)),
            c.speedup,
        )
    });
    (row, bar)
}

/// For each device of the file: three maps over a grid of problem sizes, one per selection
/// step that picks the nearest record (same device, same architecture, same backend); each
/// cell coloured by the record chosen, paler the farther its size.
fn selection_maps(page: &mut Page, f: &WisdomFile) -> Result<()> {
    let recs = &f.records;
    let axes = recs
        .iter()
        .map(|r| trim_ones(&r.problem_size).len())
        .max()
        .unwrap_or(0)
        .max(1);
    let axis_range = |a: usize| {
        let vals = recs
            .iter()
            .map(|r| r.problem_size.get(a).copied().unwrap_or(1).max(1));
        let (lo, hi) = vals.fold((i64::MAX, 1i64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        log_grid((lo / 4).max(1), hi.saturating_mul(4), GRID)
    };
    let xs = axis_range(0);
    let ys = if axes >= 2 { axis_range(1) } else { vec![1] };
    // Further axes are held at the first record's values.
    let rest: Vec<i64> = recs[0].problem_size.iter().skip(2).copied().collect();
    page.heading(&format!("Selection maps: {}", f.tuning_key));
    let legend: Vec<Vec<String>> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                swatch(&svg::css_colour(i), &format!("record {}", i + 1)),
                r.device.name.clone(),
                r.device.architecture.clone(),
                size_text(&r.problem_size),
                r.config.key(),
            ]
        })
        .collect();
    page.table(
        &[
            "record",
            "device",
            "architecture",
            "problem size",
            "configuration",
        ],
        &legend,
    );
    if axes > 2 {
        page.note(&format!("Axes beyond the second are held at {rest:?}."));
    }
    let mut devices: Vec<&WisdomRecord> = Vec::new();
    for r in recs {
        if !devices.iter().any(|d| d.device.name == r.device.name) {
            devices.push(r);
        }
    }
    // Three maps per device: past a dozen devices the page is no longer readable (and each
    // map asks the selection 64 sizes of every record): the first ones, and a note.
    const DRAWN: usize = 12;
    if devices.len() > DRAWN {
        page.note(&format!(
            "Selection maps are drawn for the first {DRAWN} of the {} devices.",
            devices.len()
        ));
        devices.truncate(DRAWN);
    }
    let other = "\u{0}another device";
    for d in devices {
        let steps = [
            (
                "same device",
                d.device.name.as_str(),
                d.device.architecture.as_str(),
            ),
            ("same architecture", other, d.device.architecture.as_str()),
            ("same backend", other, other),
        ];
        let mut most = 0.0f64;
        let mut maps = Vec::new();
        for (label, name, arch) in steps {
            let mut cells = Vec::new();
            for (iy, &y) in ys.iter().enumerate() {
                for (ix, &x) in xs.iter().enumerate() {
                    let mut size = vec![x];
                    if axes >= 2 {
                        size.push(y);
                    }
                    size.extend(&rest);
                    let q = Query {
                        device_name: name.to_string(),
                        architecture: arch.to_string(),
                        backend: d.device.backend.clone(),
                        problem_size: size,
                    };
                    let s = select(recs, &q, |_| Ok(()));
                    if let Some(i) = s.record {
                        most = most.max(s.distance);
                        cells.push((ix, iy, i, s.distance));
                    }
                }
            }
            maps.push((label, cells));
        }
        for (label, cells) in maps {
            let cells: Vec<Cell> = cells
                .into_iter()
                .map(|(x, y, i, dist)| Cell {
                    x,
                    y,
                    colour: i,
                    pale: if most > 0.0 { dist / most } else { 0.0 },
                })
                .collect();
            let title = format!("{}: {label}", d.device.name);
            let cols: Vec<String> = xs.iter().map(|&v| short(v)).collect();
            let rows: Vec<String> = ys.iter().map(|&v| short(v)).collect();
            if cells.is_empty() {
                page.note(&format!(
                    "{title}: no record matches at this step (the default is used)."
                ));
                continue;
            }
            page.figure(
                &svg::heatmap(&title, "size axis 1", if axes >= 2 { "size axis 2" } else { "" }, &cols, &rows, &cells)?,
                &format!(
                    "For a launch on {} ({}): the record the step \"{label}\" picks at each problem size; \
                     paler cells lie farther (log distance, palest = {most:.2}).",
                    d.device.name, d.device.architecture
                ),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_log_spaced_and_distinct() {
        assert_eq!(log_grid(1, 1000, 4), vec![1, 10, 100, 1000]);
        assert_eq!(log_grid(5, 5, 8), vec![5]);
        assert_eq!(size_text(&[64, 1, 1]), "64");
        assert_eq!(
            (short(512), short(4096), short(16_777_216)),
            ("512".into(), "4.1k".into(), "17M".into())
        );
    }
}
