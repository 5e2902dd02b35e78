//! The report's figures: SVG text drawn with plotters (SVG backend only, its built-in font
//! metrics: no font files are read, nothing is fetched when the page opens).

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Figure size in pixels.
const SIZE: (u32, u32) = (640, 340);
/// A small figure (one per parameter).
pub const SMALL: (u32, u32) = (320, 220);

/// Ten colours told apart easily (Tableau 10).
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The `i`-th palette colour (cycling).
pub fn colour(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// The `i`-th colour as CSS (`#1f77b4`), for tables beside a figure.
pub fn css_colour(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One line of a line chart.
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Palette index.
    pub colour: usize,
    /// Draw as a staircase (best-so-far curves).
    pub steps: bool,
    /// Mark each point with a dot.
    pub dots: bool,
}

/// Axis kinds of a chart.
#[derive(Clone, Copy, Default)]
pub struct Axes {
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
}

/// A drawing failure, named by the figure.
fn failed(what: &str) -> impl Fn(DrawingAreaErrorKind<std::io::Error>) -> anyhow::Error + '_ {
    move |e| anyhow!("drawing the figure `{what}`: {e}")
}

/// The largest magnitude a figure draws (and on a logarithmic axis the smallest positive
/// value). Far enough inside `f64` that no axis arithmetic overflows: plotters' logarithmic
/// ticks divide the range's ends and step through its decades, which never ends once the
/// ratio of the ends is infinite (values near `f64::MAX` made `kw report` hang).
pub const DRAWABLE: f64 = 1e150;

/// True when `v` can be drawn: finite, at most [`DRAWABLE`] in magnitude and, on a
/// logarithmic axis, at least `1 / DRAWABLE`.
pub fn drawable(v: f64, log: bool) -> bool {
    v.is_finite() && v.abs() <= DRAWABLE && (!log || v >= 1.0 / DRAWABLE)
}

/// The note for `n` values of `what` that were left out of the figures (none when `n` is 0).
pub fn left_out_note(n: usize, what: &str) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} {what} not finite or outside the drawable range (magnitude 1e-150 to 1e150): \
             left out of the figures (the tables keep them)."
        )
    })
}

/// A non-empty range covering the drawable `values` (positive values only on a log axis),
/// with a margin. The range always lies within a few times [`DRAWABLE`].
fn span(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| drawable(*v, log)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (0.1, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        let (lo, hi) = if hi / lo < 1.01 {
            (lo / 1.5, hi * 1.5)
        } else {
            (lo, hi)
        };
        (lo / 1.1, hi * 1.1)
    } else {
        // At least a millionth of the magnitude, so that the ends stay apart when the
        // values differ only in their last digits.
        let magnitude = lo.abs().max(hi.abs());
        let pad = if hi > lo {
            ((hi - lo) * 0.05).max(magnitude * 1e-6)
        } else {
            magnitude.max(1.0) * 0.1
        };
        (lo - pad, hi + pad)
    }
}

/// The label of a categorical axis at `v`: the category at an integer position, nothing
/// between.
fn label_at(labels: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 {
        labels.get(i as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// Draws `f` onto a fresh SVG of `size` and returns the SVG text.
fn render(
    what: &str,
    size: (u32, u32),
    f: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(failed(what))?;
        f(&root)?;
        root.present().map_err(failed(what))?;
    }
    Ok(out)
}

/// Points of a staircase through `points` (each value holds until the next x).
fn staircase(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// A line chart of `series` with a legend.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    axes: Axes,
) -> Result<String> {
    // Only drawable points are drawn (and span the axes).
    let series: Vec<Series> = series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| drawable(x, axes.x_log) && drawable(y, axes.y_log))
                .collect(),
            colour: s.colour,
            steps: s.steps,
            dots: s.dots,
        })
        .collect();
    let series = series.as_slice();
    let xs = span(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        axes.x_log,
    );
    let ys = span(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        axes.y_log,
    );
    render(title, SIZE, |root| {
        let mut b = ChartBuilder::on(root);
        b.caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(64);
        // The four axis combinations are four coordinate types.
        macro_rules! draw {
            ($x:expr, $y:expr) => {{
                let mut chart = b.build_cartesian_2d($x, $y).map_err(failed(title))?;
                chart
                    .configure_mesh()
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .draw()
                    .map_err(failed(title))?;
                for s in series.iter().filter(|s| !s.points.is_empty()) {
                    let c = colour(s.colour);
                    let pts = if s.steps {
                        staircase(&s.points)
                    } else {
                        s.points.clone()
                    };
                    chart
                        .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                        .map_err(failed(title))?
                        .label(s.name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                        });
                    if s.dots {
                        chart
                            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                            .map_err(failed(title))?;
                    }
                }
                if series.len() > 1 {
                    chart
                        .configure_series_labels()
                        .background_style(WHITE.mix(0.8))
                        .border_style(BLACK)
                        .position(SeriesLabelPosition::LowerRight)
                        .draw()
                        .map_err(failed(title))?;
                }
            }};
        }
        match (axes.x_log, axes.y_log) {
            (false, false) => draw!(xs.0..xs.1, ys.0..ys.1),
            (true, false) => draw!((xs.0..xs.1).log_scale(), ys.0..ys.1),
            (false, true) => draw!(xs.0..xs.1, (ys.0..ys.1).log_scale()),
            (true, true) => draw!((xs.0..xs.1).log_scale(), (ys.0..ys.1).log_scale()),
        }
        Ok(())
    })
}

/// A vertical marker line of a histogram.
pub struct Mark {
    /// Legend text.
    pub name: String,
    /// Where (same unit as the values).
    pub at: f64,
    /// Palette index.
    pub colour: usize,
}

/// A histogram of positive `values` over logarithmic bins, with vertical `marks`.
pub fn histogram(title: &str, x_desc: &str, values: &[f64], marks: &[Mark]) -> Result<String> {
    let marks: Vec<&Mark> = marks.iter().filter(|m| drawable(m.at, true)).collect();
    let (lo, hi) = span(
        values.iter().copied().chain(marks.iter().map(|m| m.at)),
        true,
    );
    let bins = 30usize;
    let (llo, lhi) = (lo.ln(), hi.ln());
    let width = (lhi - llo) / bins as f64;
    let mut counts = vec![0u32; bins];
    for v in values.iter().filter(|v| drawable(**v, true)) {
        let i = (((v.ln() - llo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.1;
    render(title, SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..top)
            .map_err(failed(title))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("configurations")
            .draw()
            .map_err(failed(title))?;
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(i, &n)| {
                        let a = (llo + width * i as f64).exp();
                        let b = (llo + width * (i + 1) as f64).exp();
                        Rectangle::new([(a, 0.0), (b, n as f64)], colour(0).mix(0.6).filled())
                    }),
            )
            .map_err(failed(title))?;
        for m in &marks {
            let c = colour(m.colour);
            chart
                .draw_series(LineSeries::new(
                    vec![(m.at, 0.0), (m.at, top)],
                    c.stroke_width(2),
                ))
                .map_err(failed(title))?
                .label(m.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
        }
        if !marks.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(failed(title))?;
        }
        Ok(())
    })
}

/// Values against categories: each point `(category index, value)` as a dot (spread a
/// little sideways so that equal values stay visible), and each category's best as a bar.
pub fn strip(
    title: &str,
    y_desc: &str,
    categories: &[String],
    points: &[(usize, f64)],
) -> Result<String> {
    let n = categories.len().max(1);
    let points: Vec<(usize, f64)> = points
        .iter()
        .copied()
        .filter(|p| drawable(p.1, true))
        .collect();
    let (lo, hi) = span(points.iter().map(|p| p.1), true);
    render(title, SMALL, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 14))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())
            .map_err(failed(title))?;
        let labels: Vec<String> = categories.to_vec();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.min(12))
            .x_label_formatter(&|x| label_at(&labels, *x))
            .y_desc(y_desc)
            .draw()
            .map_err(failed(title))?;
        chart
            .draw_series(points.iter().enumerate().map(|(k, &(c, v))| {
                // A deterministic spread in [-0.3, 0.3].
                let jitter = ((k * 7919) % 61) as f64 / 100.0 - 0.3;
                Circle::new((c as f64 + jitter, v), 2, colour(0).mix(0.5).filled())
            }))
            .map_err(failed(title))?;
        let mut best = vec![f64::INFINITY; n];
        for &(c, v) in &points {
            if c < n {
                best[c] = best[c].min(v);
            }
        }
        chart
            .draw_series(
                best.iter()
                    .enumerate()
                    .filter(|(_, v)| v.is_finite())
                    .map(|(c, &v)| {
                        PathElement::new(
                            vec![(c as f64 - 0.4, v), (c as f64 + 0.4, v)],
                            colour(3).stroke_width(2),
                        )
                    }),
            )
            .map_err(failed(title))?;
        Ok(())
    })
}

/// Horizontal bars: `(label, value)`.
pub fn bars(title: &str, x_desc: &str, items: &[(String, f64)]) -> Result<String> {
    let items: Vec<&(String, f64)> = items.iter().filter(|i| drawable(i.1, false)).collect();
    let n = items.len().max(1);
    let top = items.iter().map(|i| i.1).fold(0.0, f64::max).max(1.0) * 1.1;
    let height = (60 + 28 * n.min(20) as u32).min(600);
    render(title, (SIZE.0, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(120)
            .build_cartesian_2d(0f64..top, -0.5f64..n as f64 - 0.5)
            .map_err(failed(title))?;
        let labels: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y| label_at(&labels, *y))
            .x_desc(x_desc)
            .draw()
            .map_err(failed(title))?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, (_, v))| {
                Rectangle::new(
                    [(0.0, i as f64 - 0.35), (*v, i as f64 + 0.35)],
                    colour(i).filled(),
                )
            }))
            .map_err(failed(title))?;
        Ok(())
    })
}

/// One cell of a heat map: its column and row, the palette index of its colour, and how
/// pale it is drawn (0: full colour, 1: white).
pub struct Cell {
    /// Column.
    pub x: usize,
    /// Row.
    pub y: usize,
    /// Palette index.
    pub colour: usize,
    /// Paleness in [0, 1].
    pub pale: f64,
}

/// A heat map with labelled columns and rows.
pub fn heatmap(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    columns: &[String],
    rows: &[String],
    cells: &[Cell],
) -> Result<String> {
    let (nx, ny) = (columns.len().max(1), rows.len().max(1));
    render(title, SMALL, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 13))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..nx as f64 - 0.5, -0.5f64..ny as f64 - 0.5)
            .map_err(failed(title))?;
        let (cl, rl) = (columns.to_vec(), rows.to_vec());
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nx)
            .y_labels(ny)
            .x_label_formatter(&|v| label_at(&cl, *v))
            .y_label_formatter(&|v| label_at(&rl, *v))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(failed(title))?;
        chart
            .draw_series(cells.iter().map(|c| {
                let RGBColor(r, g, b) = colour(c.colour);
                let p = c.pale.clamp(0.0, 0.85);
                let fade = |v: u8| (v as f64 + (255.0 - v as f64) * p).round() as u8;
                let (x, y) = (c.x as f64, c.y as f64);
                Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    RGBColor(fade(r), fade(g), fade(b)).filled(),
                )
            }))
            .map_err(failed(title))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(span([2.0, 2.0].into_iter(), false), (1.8, 2.2));
        let (lo, hi) = span([0.0, -1.0, 5.0].into_iter(), true);
        assert!(lo > 0.0 && lo < 5.0 && hi > 5.0);
        assert_eq!(span(std::iter::empty(), false), (0.0, 1.0));
    }

    /// Values that once made plotters' tick loops run forever (an axis whose ends' ratio
    /// overflows) or that cannot be drawn at all: every figure still comes back.
    #[test]
    fn extreme_values_are_left_out_and_figures_still_drawn() {
        let extremes = [
            f64::MAX,
            1e308,
            1e307,
            1e151,
            1e150,
            -1e308,
            f64::MIN_POSITIVE,
            1e-300,
            1e-150,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.01,
            1.0,
            1e15,
            1e15 + 0.125,
        ];
        assert!(!drawable(1e308, false) && !drawable(f64::NAN, false));
        assert!(!drawable(1e-300, true) && drawable(1e-300, false));
        assert!(drawable(1e150, true) && drawable(1e-150, true));
        for (i, &a) in extremes.iter().enumerate() {
            for &b in &extremes[i..] {
                for log in [false, true] {
                    let (lo, hi) = span([a, b].into_iter(), log);
                    assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{a} {b} {log}");
                    assert!((hi - lo).is_finite() && (!log || (hi / lo).is_finite()));
                }
                let s = Series {
                    name: "s".into(),
                    points: vec![(a, b), (b, a), (1.0, 2.0)],
                    colour: 0,
                    steps: true,
                    dots: true,
                };
                for (x_log, y_log) in [(false, false), (true, true), (false, true)] {
                    let axes = Axes { x_log, y_log };
                    lines("t", "x", "y", std::slice::from_ref(&s), axes).unwrap();
                }
                let marks = [Mark {
                    name: "m".into(),
                    at: a,
                    colour: 1,
                }];
                histogram("h", "x", &[a, b, 0.5], &marks).unwrap();
                strip("s", "y", &["p".into(), "q".into()], &[(0, a), (1, b)]).unwrap();
                bars("b", "x", &[("a".into(), a), ("b".into(), b)]).unwrap();
            }
        }
        assert_eq!(left_out_note(0, "values are"), None);
        assert!(left_out_note(2, "values are")
            .unwrap()
            .starts_with("2 values are"));
    }

    #[test]
    fn a_chart_is_svg_with_its_lines() {
        let s = Series {
            name: "best".into(),
            points: vec![(1.0, 3.0), (2.0, 2.0), (5.0, 1.0)],
            colour: 0,
            steps: true,
            dots: false,
        };
        let svg = lines("t", "x", "y", &[s], Axes::default()).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("<polyline"), "no line drawn");
        assert!(staircase(&[(1.0, 3.0), (2.0, 2.0)]) == vec![(1.0, 3.0), (2.0, 3.0), (2.0, 2.0)]);
    }
}
