//! A strategy comparison's section, from `kw simulate --json` output (one space, or a suite):
//! the fraction of the optimum reached against the budget, per space and their mean, with a
//! peer's scores (the same JSON form) where given.

use super::html::Page;
use super::svg::{self, Axes, Series};
use anyhow::{bail, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One score: a strategy's mean fraction of the optimum on a space at a budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// The space (`one space` for the output of `kw simulate CACHE`).
    pub space: String,
    /// The strategy (prefixed with `peer ` for a peer's scores).
    pub strategy: String,
    /// Evaluations.
    pub budget: f64,
    /// Mean fraction of the optimum.
    pub fraction: f64,
}

/// The label of scores that name no space.
const ONE_SPACE: &str = "one space";
/// The label of the mean over spaces.
const MEAN: &str = "mean";

/// True when `v` looks like `kw simulate --json` output.
pub fn is_simulation(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        !a.is_empty()
            && a.iter().all(|o| {
                o.get("strategy").is_some()
                    && o.get("budget").is_some()
                    && o.get("mean_fraction").is_some()
            })
    })
}

/// The scores of `kw simulate --json` output; `peer` prefixes the strategies' names.
pub fn scores(path: &Path, v: &Value, peer: bool) -> Result<Vec<Score>> {
    if !is_simulation(v) {
        bail!(
            "{}: not `kw simulate --json` output (an array of objects with strategy, budget and mean_fraction)",
            path.display()
        );
    }
    let mut out = Vec::new();
    for o in v.as_array().into_iter().flatten() {
        let (Some(budget), Some(fraction)) = (o["budget"].as_f64(), o["mean_fraction"].as_f64())
        else {
            bail!(
                "{}: a score without a numeric budget or mean_fraction: {o}",
                path.display()
            );
        };
        let name = o["strategy"].as_str().unwrap_or("unnamed").to_string();
        out.push(Score {
            space: o
                .get("space")
                .and_then(Value::as_str)
                .unwrap_or(ONE_SPACE)
                .to_string(),
            strategy: if peer { format!("peer {name}") } else { name },
            budget,
            fraction,
        });
    }
    Ok(out)
}

/// True for a space's own scores (not the suite's mean or a family's, `family:NAME`).
fn is_space(name: &str) -> bool {
    name != MEAN && !name.starts_with("family:")
}

/// The mean over spaces per strategy and budget, for strategies without `mean` rows (the
/// suite prints its own; a peer's file may not).
fn with_means(mut scores: Vec<Score>) -> Vec<Score> {
    let spaces: Vec<&str> = {
        let mut s: Vec<&str> = scores
            .iter()
            .map(|s| s.space.as_str())
            .filter(|s| is_space(s))
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    if spaces.len() < 2 {
        return scores;
    }
    let mut sums: BTreeMap<(String, u64), (f64, usize)> = BTreeMap::new();
    for s in scores.iter().filter(|s| is_space(&s.space)) {
        let e = sums
            .entry((s.strategy.clone(), s.budget.to_bits()))
            .or_insert((0.0, 0));
        e.0 += s.fraction;
        e.1 += 1;
    }
    let has_mean: Vec<String> = scores
        .iter()
        .filter(|s| s.space == MEAN)
        .map(|s| s.strategy.clone())
        .collect();
    for ((strategy, budget), (sum, n)) in sums {
        if !has_mean.contains(&strategy) {
            scores.push(Score {
                space: MEAN.into(),
                strategy,
                budget: f64::from_bits(budget),
                fraction: sum / n as f64,
            });
        }
    }
    scores
}

/// Adds the strategy comparison of all `scores` (own and peers').
pub fn section(page: &mut Page, sources: &[String], scores: Vec<Score>) -> Result<()> {
    page.section("Strategy comparison");
    page.note(&format!(
        "Fraction of the optimum (optimum / best found) against the budget, from {}.",
        sources.join(", ")
    ));
    let scores = with_means(scores);
    let left_out = scores
        .iter()
        .filter(|s| !svg::drawable(s.budget, false) || !svg::drawable(s.fraction, false))
        .count();
    if let Some(note) = svg::left_out_note(left_out, "score(s) are") {
        page.note(&note);
    }
    let mut spaces: Vec<String> = scores.iter().map(|s| s.space.clone()).collect();
    spaces.sort_unstable();
    spaces.dedup();
    // The mean first.
    spaces.sort_by_key(|s| s != MEAN);
    let mut strategies: Vec<String> = scores.iter().map(|s| s.strategy.clone()).collect();
    strategies.sort_unstable();
    strategies.dedup();
    let mut budgets: Vec<f64> = scores.iter().map(|s| s.budget).collect();
    budgets.sort_by(f64::total_cmp);
    budgets.dedup();
    let mut rows = Vec::new();
    for space in &spaces {
        let series: Vec<Series> = strategies
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let mut points: Vec<(f64, f64)> = scores
                    .iter()
                    .filter(|s| &s.space == space && &s.strategy == st)
                    .map(|s| (s.budget, s.fraction))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name: st.clone(),
                    points,
                    colour: i,
                    steps: false,
                    dots: true,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        for s in &series {
            let mut row = vec![space.clone(), s.name.clone()];
            for b in &budgets {
                row.push(
                    s.points
                        .iter()
                        .find(|p| p.0 == *b)
                        .map_or("-".into(), |p| format!("{:.3}", p.1)),
                );
            }
            rows.push(row);
        }
        let wide = budgets
            .first()
            .zip(budgets.last())
            .is_some_and(|(a, b)| *a > 0.0 && b / a > 10.0);
        let axes = Axes {
            x_log: wide,
            y_log: false,
        };
        page.figure(
            &svg::lines(
                space,
                "budget (evaluations)",
                "fraction of optimum",
                &series,
                axes,
            )?,
            &format!("{space}: mean fraction of the optimum per strategy."),
        );
    }
    let mut head = vec!["space".to_string(), "strategy".to_string()];
    head.extend(budgets.iter().map(|b| format!("{b}")));
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    page.table(&head, &rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn single_and_suite_outputs_are_read_and_means_added() {
        let one = json!([{"strategy": "random", "budget": 50, "seeds": 3, "mean_fraction": 0.8}]);
        let s = scores(Path::new("a.json"), &one, false).unwrap();
        assert_eq!(s[0].space, ONE_SPACE);
        let suite = json!([
            {"space": "a_X", "strategy": "ils", "budget": 50, "mean_fraction": 0.8},
            {"space": "b_Y", "strategy": "ils", "budget": 50, "mean_fraction": 0.6},
            {"space": "family:b", "strategy": "ils", "budget": 50, "mean_fraction": 0.6},
        ]);
        let s = with_means(scores(Path::new("b.json"), &suite, true).unwrap());
        let mean = s.iter().find(|s| s.space == MEAN).unwrap();
        assert_eq!(mean.strategy, "peer ils");
        assert!((mean.fraction - 0.7).abs() < 1e-12);
        assert!(scores(Path::new("c.json"), &json!({"x": 1}), false).is_err());
    }
}
