//! `kw simulate --suite DIR`: every strategy on every measured space of a directory; per space,
//! per family and overall mean, the final fraction and the area under the best-so-far curve
//! at each budget.
//!
//! A space that cannot be loaded (its cache file not a regular file, unreadable or invalid,
//! its family's T1 file not a regular file, unreadable or invalid, no valid configuration) is
//! reported on standard error, naming the file and the
//! problem, and skipped: the others are scored, and the means are over them. The command then
//! fails (exit status 1, after the results) saying how many spaces were skipped, so that
//! scripts notice; when no space can be loaded it fails without results.

use super::args::{load_priors, prior_points, SimulateArgs};
use anyhow::{bail, Context, Result};
use kw_core::kernel_tuner::CacheFile;
use kw_tune::prior::PriorSource;
use kw_tune::simulate::{check_prior, Simulation};
use kw_tune::suite::{self, Cell, SuiteEntry};
use std::collections::BTreeMap;
use std::path::Path;
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
    check_unique(dir, &entries)?;
    let all = entries.clone();
    if !args.spaces.is_empty() {
        let matches = |s: &String, e: &SuiteEntry| *s == e.family || *s == e.name;
        let unmatched: Vec<&str> = args
            .spaces
            .iter()
            .filter(|s| !entries.iter().any(|e| matches(s, e)))
            .map(String::as_str)
            .collect();
        if !unmatched.is_empty() {
            bail!(
                "{}: no space matches {} of --spaces {} (a family or a space name)",
                dir.display(),
                unmatched
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                args.spaces.join(",")
            );
        }
        entries.retain(|e: &SuiteEntry| args.spaces.iter().any(|s| matches(s, e)));
    }
    let seed_range = args.seed_range()?;
    let last_seed = seed_range.end - 1;
    let seeds: Vec<u64> = seed_range.collect();
    let max = budgets.last().copied().unwrap_or(1) as usize;
    let mut rows: Vec<Row> = Vec::new();
    // The spaces scored, in order.
    let mut scored: Vec<&SuiteEntry> = Vec::new();
    let mut skipped = Skipped::default();
    // Notes of a T1 file shared by a family, said once.
    let mut said: std::collections::HashSet<String> = std::collections::HashSet::new();
    for entry in &entries {
        if skipped.contains(entry) {
            // Already found invalid as a prior of its family (and said so).
            continue;
        }
        let started = Instant::now();
        if let Some(problem) = &entry.problem {
            skipped.add(entry, &anyhow::anyhow!("{problem}"));
            continue;
        }
        let sim = match Simulation::load(&entry.cache, entry.t1.as_deref()) {
            Ok(sim) => sim,
            Err(e) => {
                skipped.add(entry, &restrictions_context(entry, e));
                continue;
            }
        };
        super::args::warn_missing(&entry.cache, &entry.name, &sim, "");
        for note in &sim.notes {
            if said.insert(note.clone()) {
                eprintln!("kw simulate: note: {}", kw_core::diag::one_line(note, 4000));
            }
        }
        let random = suite::random_curve(&sim, max);
        let sources = if args.prior_family {
            family_priors(&all, entry, &mut skipped)
        } else {
            load_priors(&args.prior)?
        };
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
                    lookahead: args.lookahead.unwrap_or(1),
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
        scored.push(entry);
    }
    if scored.is_empty() {
        bail!(
            "{}: none of the {} space(s) could be loaded: {} (see the errors above)",
            dir.display(),
            entries.len(),
            skipped.names()
        );
    }
    let mut families: Vec<String> = scored.iter().map(|e| e.family.clone()).collect();
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
        return skipped.result(dir);
    }
    let skipped_words = match skipped.len() {
        0 => String::new(),
        n => format!(" ({n} skipped: see the errors)"),
    };
    println!(
        "suite {}: {} spaces{skipped_words}, seeds {}..{}; fraction = optimum / best found; area = mean \
         standardised improvement of the best-so-far curve over random search (0 random, 1 optimum at once)",
        dir.display(),
        scored.len(),
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
    skipped.result(dir)
}

/// The spaces of a suite that could not be loaded (as a space to score, or as a prior of its
/// family), each with why; each is said on standard error once, when found.
#[derive(Default)]
struct Skipped {
    /// Space name to the problem (naming the file).
    spaces: BTreeMap<String, String>,
}

impl Skipped {
    /// Whether `entry` was found invalid.
    fn contains(&self, entry: &SuiteEntry) -> bool {
        self.spaces.contains_key(&entry.name)
    }

    /// Records that `entry` cannot be loaded because of `error`, and says so (once).
    fn add(&mut self, entry: &SuiteEntry, error: &anyhow::Error) {
        if self.contains(entry) {
            return;
        }
        let why = crate::error_text(error);
        eprintln!(
            "kw simulate: skipping space `{}` ({}): {why}",
            entry.name,
            entry.cache.display()
        );
        self.spaces.insert(entry.name.clone(), why);
    }

    /// How many spaces were skipped.
    fn len(&self) -> usize {
        self.spaces.len()
    }

    /// The names of the spaces skipped, `, `-separated.
    fn names(&self) -> String {
        let names: Vec<&str> = self.spaces.keys().map(String::as_str).collect();
        names.join(", ")
    }

    /// The end of a run: an error when any space was skipped (its results are printed, but
    /// scripts must notice that some spaces are missing from them).
    fn result(&self, dir: &Path) -> Result<()> {
        if self.spaces.is_empty() {
            return Ok(());
        }
        bail!(
            "{}: {} space(s) could not be loaded and are left out of the results: {} (see the \
             errors above)",
            dir.display(),
            self.len(),
            self.names()
        )
    }
}

/// `--prior-family`: the prior of `entry`, every other space of its family (of the whole
/// suite, whether selected or not). A space whose cache file cannot be read or holds invalid
/// times (the checks of [`Simulation::load`] on the file itself) is skipped and left out, so
/// that no result rests on an invalid file, whatever the order the spaces are scored in.
fn family_priors(
    all: &[SuiteEntry],
    entry: &SuiteEntry,
    skipped: &mut Skipped,
) -> Vec<PriorSource> {
    let mut sources = Vec::new();
    for other in all
        .iter()
        .filter(|e| e.family == entry.family && e.name != entry.name)
    {
        if skipped.contains(other) {
            continue;
        }
        if let Some(problem) = &other.problem {
            skipped.add(
                other,
                &anyhow::anyhow!("{problem}").context("reading it as a prior"),
            );
            continue;
        }
        let loaded = CacheFile::load(&other.cache)
            .map_err(kw_tune::TuneError::from)
            .and_then(|cache| check_prior(&other.cache, &cache).map(|()| cache));
        match loaded {
            Ok(cache) => sources.push(PriorSource::from_cache(&other.cache, &cache)),
            Err(e) => skipped.add(
                other,
                &anyhow::Error::new(e).context("reading it as a prior"),
            ),
        }
    }
    sources
}

/// Two spaces of the same name (`fa_X.json` and `fa_X.json.gz`) are ambiguous: an error
/// naming both files.
fn check_unique(dir: &Path, entries: &[SuiteEntry]) -> Result<()> {
    let clashes: Vec<String> = entries
        .windows(2)
        .filter(|w| w[0].name == w[1].name)
        .map(|w| {
            format!(
                "`{}` ({} and {})",
                w[0].name,
                w[0].cache.display(),
                w[1].cache.display()
            )
        })
        .collect();
    if !clashes.is_empty() {
        bail!(
            "{}: two cache files give the same space: {}; keep one of each",
            dir.display(),
            clashes.join(", ")
        );
    }
    Ok(())
}

/// A failure to load `entry` that comes of its family's restrictions (a condition over an
/// unknown parameter, a division by zero, no valid configuration left) names the T1 file too.
fn restrictions_context(entry: &SuiteEntry, e: kw_tune::TuneError) -> anyhow::Error {
    use kw_tune::TuneError::{EmptySpace, NoSuccess, Space};
    match (&entry.t1, &e) {
        (Some(t1), Space(_) | EmptySpace | NoSuccess) => {
            anyhow::Error::new(e).context(format!("with the restrictions of {}", t1.display()))
        }
        _ => e.into(),
    }
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
