//! Scoring strategies on a directory of measured spaces (`kw simulate --suite DIR`).
//!
//! A suite directory holds Kernel Tuner cache files named `<family>_<device>.json.gz` (or
//! `.json`) and, beside them, each family's restrictions in `<family>_T1.json` (optional: a
//! family without one is unrestricted). Every run is scored at each budget by its final
//! fraction (`optimum / best_found`, as [`crate::simulate`]) and by the area under its
//! best-so-far curve: the mean over evaluations `1..=N` of the standardised improvement over
//! random search, `(f_k - r_k) / (1 - r_k)`, where `f_k` is the run's best-so-far fraction after
//! `k` evaluations and `r_k` the expected best-so-far fraction of uniform random sampling
//! without replacement after `k` evaluations (computed exactly from the space). 0 is random
//! search, 1 the optimum from the first evaluation.

use crate::error::TuneError;
use crate::prior::Seeding;
use crate::simulate::{parallel, Simulation};
use crate::stop::Stop;
use crate::strategies;
use crate::tuner::Tuner;
use std::path::{Path, PathBuf};

/// One space of a suite: its name (the file name without extension), family and files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteEntry {
    /// The space's name, e.g. `convolution_A100`.
    pub name: String,
    /// The family: the longest prefix of the name (ending before one of its `_`) for which
    /// `<prefix>_T1.json` exists in the directory, else the name up to its first `_`, e.g.
    /// `convolution`.
    pub family: String,
    /// The cache file.
    pub cache: PathBuf,
    /// The family's restrictions (`<family>_T1.json`), when present (whatever it is: a file
    /// that cannot be read is named in [`SuiteEntry::problem`]).
    pub t1: Option<PathBuf>,
    /// Why the space cannot be loaded, found without opening its files (naming the file):
    /// its cache file or its family's T1 file is not a regular file, or cannot be reached
    /// (a dangling symbolic link, a loop of links). `None`: no problem found.
    pub problem: Option<String>,
}

/// Whether `path` names a regular file (following symbolic links) without opening it (a FIFO
/// is not opened): `Err` says why not, naming the file.
fn regular_file(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(format!("{}: not a regular file", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The family of space `name` in `dir`: the longest prefix ending before one of its `_` for
/// which `<prefix>_T1.json` exists (in any form: a directory or a broken link is found too,
/// and reported when the space is loaded), else the name up to its first `_`.
fn family_of(dir: &Path, name: &str) -> (String, Option<PathBuf>) {
    let mut cuts: Vec<usize> = name.match_indices('_').map(|(i, _)| i).collect();
    cuts.reverse();
    for &i in &cuts {
        let prefix = &name[..i];
        if prefix.is_empty() {
            continue;
        }
        let t1 = dir.join(format!("{prefix}_T1.json"));
        if std::fs::symlink_metadata(&t1).is_ok() {
            return (prefix.to_string(), Some(t1));
        }
    }
    (name.split('_').next().unwrap_or(name).to_string(), None)
}

/// The spaces of a suite directory, sorted by name: every `*.json.gz` / `*.json` entry that is
/// not a `*_T1.json` file (subdirectories are not searched). An entry named like a space that
/// is not a regular file (a directory, a FIFO, a dangling link) is a space with a
/// [`SuiteEntry::problem`], as is a space whose family's T1 file is not a regular file.
pub fn discover(dir: &Path) -> Result<Vec<SuiteEntry>, TuneError> {
    let read = std::fs::read_dir(dir).map_err(|e| TuneError::io(dir, e))?;
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| TuneError::io(dir, e))?;
        let path = entry.path();
        let Some(os_name) = path.file_name() else {
            continue;
        };
        // A name that is not UTF-8 is still listed (and left out, named), never skipped
        // unsaid; hidden files (`.NAME`, editors' and tools' own) are not spaces.
        let utf8 = os_name.to_str().is_some();
        let file = os_name.to_string_lossy();
        if file.starts_with('.') {
            continue;
        }
        let Some(name) = file
            .strip_suffix(".json.gz")
            .or_else(|| file.strip_suffix(".json"))
        else {
            continue;
        };
        if name.ends_with("_T1") {
            continue;
        }
        let (family, t1) = family_of(dir, name);
        let problem = if utf8 {
            regular_file(&path)
                .err()
                .or_else(|| t1.as_deref().and_then(|t| regular_file(t).err()))
        } else {
            Some(format!(
                "{}: the file name is not UTF-8 (rename it)",
                path.display()
            ))
        };
        out.push(SuiteEntry {
            name: name.to_string(),
            family,
            cache: path.clone(),
            t1,
            problem,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.cache.cmp(&b.cache)));
    if out.is_empty() {
        return Err(TuneError::EmptySuite {
            dir: dir.to_path_buf(),
        });
    }
    Ok(out)
}

/// The expected best-so-far fraction of uniform random sampling without replacement after
/// `k = 1..=n` evaluations (index `k - 1`). Configurations that failed or are missing from the
/// cache count as fraction 0.
pub fn random_curve(sim: &Simulation, n: usize) -> Vec<f64> {
    let total = sim.space.len() as usize;
    let mut v: Vec<f64> = sim
        .space
        .iter()
        .filter_map(|p| match sim.evaluator.result(&p) {
            Some(Ok(t)) if *t > 0.0 => Some(sim.optimum / *t),
            _ => None,
        })
        .collect();
    v.sort_by(|a, b| b.total_cmp(a));
    (1..=n)
        .map(|k| {
            if k >= total {
                return 1.0;
            }
            // q = P(none of the j best were drawn in k draws); the j-th best (0-based) is the
            // best drawn with probability q_j - q_{j+1}.
            let mut q = 1.0;
            let mut e = 0.0;
            for (j, &x) in v.iter().enumerate() {
                let next = q * (total - k - j) as f64 / (total - j) as f64;
                e += x * (q - next);
                q = next;
                if q < 1e-15 || total - k <= j + 1 {
                    break;
                }
            }
            e
        })
        .collect()
}

/// The best-so-far fraction after each evaluation of one run of `name` with `seed` and
/// `budget`, seeded with `prior` (empty: none), with `lookahead` proposals queued
/// ([`Tuner::with_lookahead`]: 1 as in Kernel Tuner's simulation mode, more as `kw tune`
/// compiling ahead); a run that ended early (space exhausted) is extended with its last
/// value.
pub fn run_curve(
    sim: &Simulation,
    name: &str,
    prior: &Seeding,
    seed: u64,
    budget: u64,
    lookahead: usize,
) -> Result<Vec<f64>, TuneError> {
    let mut strategy = strategies::create_seeded(name, seed, prior)?;
    let mut evaluator = sim.evaluator.clone();
    let report = Tuner::new(&sim.space, Stop::Evaluations(budget))
        .with_lookahead(lookahead)
        .run(&mut *strategy, &mut evaluator)?;
    let mut best = f64::INFINITY;
    let mut curve: Vec<f64> = report
        .history
        .iter()
        .map(|e| {
            if let Ok(t) = e.result {
                best = best.min(t);
            }
            if best.is_finite() {
                sim.optimum / best
            } else {
                0.0
            }
        })
        .collect();
    let last = curve.last().copied().unwrap_or(0.0);
    curve.resize(budget as usize, last);
    Ok(curve)
}

/// The area under a best-so-far curve: the mean of `(f_k - r_k) / (1 - r_k)` over its
/// evaluations (`random` at least as long; a step where random search is already at the
/// optimum scores 1 when the run is too).
pub fn area(curve: &[f64], random: &[f64]) -> f64 {
    if curve.is_empty() {
        return 0.0;
    }
    let sum: f64 = curve
        .iter()
        .zip(random)
        .map(|(&f, &r)| {
            let d = 1.0 - r;
            if d < 1e-12 {
                if f >= r - 1e-12 {
                    1.0
                } else {
                    0.0
                }
            } else {
                (f - r) / d
            }
        })
        .sum();
    sum / curve.len() as f64
}

/// The scores of one strategy on one space at one budget, over seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Evaluations per run.
    pub budget: u64,
    /// Final fraction per seed.
    pub fractions: Vec<f64>,
    /// Area under the best-so-far curve per seed.
    pub areas: Vec<f64>,
}

impl Cell {
    /// The mean final fraction.
    pub fn mean(&self) -> f64 {
        mean(&self.fractions)
    }

    /// The mean area under the best-so-far curve.
    pub fn area(&self) -> f64 {
        mean(&self.areas)
    }

    /// How many runs found the optimum.
    pub fn hits(&self) -> usize {
        self.fractions.iter().filter(|&&f| f >= 1.0).count()
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// How [`score`] runs a strategy.
#[derive(Clone, Copy, Debug)]
pub struct Runs<'a> {
    /// The budgets scored (ascending, non-empty).
    pub budgets: &'a [u64],
    /// The seeds.
    pub seeds: &'a [u64],
    /// Seeds simulated at once.
    pub threads: usize,
    /// Proposals queued ahead of the results ([`run_curve`]).
    pub lookahead: usize,
}

/// Scores `name` seeded with `prior` (empty: none) on `sim` at every budget of `runs`, with
/// each of its seeds. A strategy that ignores the budget ([`crate::Strategy::anytime`]) runs once per
/// seed at the largest budget and every budget is scored on the prefix of that run (the same
/// proposals it would make with the smaller budget; with a lookahead above 1, the prefix of a
/// run that goes on: near the end of a budget the loop asks ahead less); others run once per
/// budget.
pub fn score(
    sim: &Simulation,
    random: &[f64],
    name: &str,
    prior: &Seeding,
    runs: Runs<'_>,
) -> Result<Vec<Cell>, TuneError> {
    let Runs {
        budgets,
        seeds,
        threads,
        lookahead,
    } = runs;
    let anytime = strategies::create(name, 0)?.anytime();
    let max = budgets.iter().copied().max().unwrap_or(0);
    let per_seed = |seed: u64| -> Result<Vec<(f64, f64)>, TuneError> {
        if anytime {
            let curve = run_curve(sim, name, prior, seed, max, lookahead)?;
            Ok(budgets
                .iter()
                .map(|&b| {
                    let c = &curve[..b as usize];
                    (c.last().copied().unwrap_or(0.0), area(c, random))
                })
                .collect())
        } else {
            budgets
                .iter()
                .map(|&b| {
                    let c = run_curve(sim, name, prior, seed, b, lookahead)?;
                    Ok((c.last().copied().unwrap_or(0.0), area(&c, random)))
                })
                .collect()
        }
    };
    let results = parallel(seeds, threads, per_seed)?;
    Ok(budgets
        .iter()
        .enumerate()
        .map(|(i, &budget)| Cell {
            budget,
            fractions: results.iter().map(|r| r[i].0).collect(),
            areas: results.iter().map(|r| r[i].1).collect(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_is_zero_for_random_and_one_for_the_optimum() {
        let random = [0.5, 0.6, 0.7];
        assert!((area(&random, &random)).abs() < 1e-12);
        assert!((area(&[1.0, 1.0, 1.0], &random) - 1.0).abs() < 1e-12);
        let half = [0.75, 0.8, 0.85];
        assert!((area(&half, &random) - 0.5).abs() < 1e-12);
    }
}
