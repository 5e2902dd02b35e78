//! `kw simulate --suite DIR`: every strategy on every measured space of a directory; per space,
//! per family and overall mean, the final fraction and the area under the best-so-far curve
//! at each budget.

use super::args::{load_priors, prior_points, SimulateArgs};
use anyhow::{bail, Context, Result};
use kw_tune::simulate::Simulation;
use kw_tune::suite::{self, Cell, SuiteEntry};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One row: a space (or a mean), a strategy and its cells per budget.
struct Row {
    space: String,
    family: String,
    strategy: String,
    cells: Vec<Cell>,
}

pub fn run(dir: &Path, args: &SimulateArgs) -> Result<()> {
    let runs = args.runs()?;
    let names: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    let budgets = args.budgets()?;
    let threads = args.threads();
    let mut entries =
        suite::discover(dir).with_context(|| format!("reading the suite {}", dir.display()))?;
    let all = entries.clone();
    if !args.spaces.is_empty() {
        entries.retain(|e: &SuiteEntry| args.spaces.iter().any(|s| *s == e.family || *s == e.name));
        if entries.is_empty() {
            bail!(
                "{}: no space matches --spaces {}",
                dir.display(),
                args.spaces.join(",")
            );
        }
    }
    let seed_range = args.seed_range()?;
    let last_seed = seed_range.end - 1;
    let seeds: Vec<u64> = seed_range.collect();
    let max = budgets.last().copied().unwrap_or(1) as usize;
    let mut rows: Vec<Row> = Vec::new();
    // Notes of a T1 file shared by a family, said once.
    let mut said: std::collections::HashSet<String> = std::collections::HashSet::new();
    for entry in &entries {
        let started = Instant::now();
        let sim = Simulation::load(&entry.cache, entry.t1.as_deref())
            .with_context(|| format!("loading the simulation of {}", entry.cache.display()))?;
        for note in &sim.notes {
            if said.insert(note.clone()) {
                eprintln!("kw simulate: note: {note}");
            }
        }
        let random = suite::random_curve(&sim, max);
        let prior_files: Vec<PathBuf> = if args.prior_family {
            all.iter()
                .filter(|e| e.family == entry.family && e.name != entry.name)
                .map(|e| e.cache.clone())
                .collect()
        } else {
            args.prior.clone()
        };
        let sources = load_priors(&prior_files)?;
        for run in &runs {
            let points = prior_points(
                &sources,
                &sim.space,
                &sim.cache.device_name,
                run.prior,
                false,
            );
            let cells = suite::score(
                &sim,
                &random,
                &run.name,
                &points,
                suite::Runs {
                    budgets: &budgets,
                    seeds: &seeds,
                    threads,
                    lookahead: args.lookahead.max(1),
                },
            )
            .with_context(|| format!("simulating `{}` on {}", run.label, entry.name))?;
            rows.push(Row {
                space: entry.name.clone(),
                family: entry.family.clone(),
                strategy: run.label.clone(),
                cells,
            });
        }
        eprintln!(
            "{}: {} valid configurations, {:.1} s",
            entry.name,
            sim.space.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let mut families: Vec<String> = entries.iter().map(|e| e.family.clone()).collect();
    families.dedup();
    let mut means: Vec<Row> = Vec::new();
    for name in &names {
        for family in &families {
            means.push(mean_row(
                &rows,
                name,
                &format!("family:{family}"),
                Some(family),
            ));
        }
        means.push(mean_row(&rows, name, "mean", None));
    }
    if args.json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .chain(&means)
            .flat_map(|r| {
                r.cells.iter().map(|c| {
                    serde_json::json!({
                        "space": r.space,
                        "family": r.family,
                        "strategy": r.strategy,
                        "budget": c.budget,
                        "seeds": args.seeds,
                        "first_seed": args.first_seed,
                        "mean_fraction": c.mean(),
                        "area": c.area(),
                        "optimum_hits": c.hits(),
                        "fractions": c.fractions,
                    })
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return Ok(());
    }
    println!(
        "suite {}: {} spaces, seeds {}..{}; fraction = optimum / best found; area = mean \
         standardised improvement of the best-so-far curve over random search (0 random, 1 optimum at once)",
        dir.display(),
        entries.len(),
        args.first_seed,
        last_seed
    );
    for (title, area) in [
        ("mean final fraction", false),
        ("area under the best-so-far curve", true),
    ] {
        println!("\n{title}");
        print!("{:<32} {:<14}", "space", "strategy");
        for b in &budgets {
            print!(" {:>7}", b);
        }
        println!();
        for r in rows.iter().chain(&means) {
            print!("{:<32} {:<14}", r.space, r.strategy);
            for c in &r.cells {
                print!(" {:>7.4}", if area { c.area() } else { c.mean() });
            }
            println!();
        }
    }
    Ok(())
}

/// The mean over the spaces (of `family`, or all) of `name`'s cells: per seed, the mean of
/// the spaces' fractions and areas.
fn mean_row(rows: &[Row], name: &str, label: &str, family: Option<&String>) -> Row {
    let of: Vec<&Row> = rows
        .iter()
        .filter(|r| r.strategy == name && family.is_none_or(|f| r.family == *f))
        .collect();
    let cells = of
        .first()
        .map(|first| {
            (0..first.cells.len())
                .map(|i| {
                    let seeds = first.cells[i].fractions.len();
                    let avg = |get: &dyn Fn(&Cell) -> &Vec<f64>| -> Vec<f64> {
                        (0..seeds)
                            .map(|s| {
                                of.iter().map(|r| get(&r.cells[i])[s]).sum::<f64>()
                                    / of.len() as f64
                            })
                            .collect()
                    };
                    Cell {
                        budget: first.cells[i].budget,
                        fractions: avg(&|c| &c.fractions),
                        areas: avg(&|c| &c.areas),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Row {
        space: label.to_string(),
        family: family.cloned().unwrap_or_default(),
        strategy: name.to_string(),
        cells,
    }
}
