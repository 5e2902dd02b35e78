//! Simulation over measured spaces: [`SimulationEvaluator`] answers from a Kernel Tuner cache
//! file instead of a GPU, and [`benchmark`] scores a strategy over seeded runs the way Kernel
//! Tuner's simulation mode is scored (`optimum / best_found`, budget = distinct configurations
//! evaluated, failed ones included).

use crate::error::TuneError;
use crate::evaluator::{EvalFailure, EvalResult, Evaluator};
use crate::prior::Seeding;
use crate::stop::Stop;
use crate::strategies;
use crate::tuner::Tuner;
use kw_core::kernel_tuner::{load_restrictions, CacheFile, KtError, Outcome, Restrictions};
use kw_core::space::{Parameter, Point, TuningSpace};
use kw_core::{config::Config, expr::Expr, value::Value, value::ValueIndex};
use std::collections::HashMap;
use std::path::Path;

/// The failure reason of a configuration that the cache file does not hold.
pub const NOT_IN_CACHE: &str = "not in cache";

/// Evaluates configurations by looking up their measured time (or recorded failure) in a
/// Kernel Tuner cache file.
#[derive(Clone, Debug)]
pub struct SimulationEvaluator {
    results: HashMap<Point, EvalResult>,
}

impl SimulationEvaluator {
    /// The evaluator of `cache`'s entries, as points of `space` (entries whose values are not
    /// values of the space's parameters are ignored).
    pub fn new(space: &TuningSpace, cache: &CacheFile) -> SimulationEvaluator {
        let names: Vec<String> = cache.params.iter().map(|p| p.name.clone()).collect();
        let mut results = HashMap::new();
        for entry in &cache.entries {
            let config = Config(names.iter().cloned().zip(entry.values.clone()).collect());
            if let Ok(point) = space.point(&config) {
                let result = match &entry.outcome {
                    Outcome::Value(v) => Ok(*v),
                    Outcome::Failed(reason) => Err(EvalFailure::new(reason.clone())),
                };
                results.insert(point, result);
            }
        }
        SimulationEvaluator { results }
    }

    /// The best objective value among the valid configurations of `space`.
    pub fn optimum(&self, space: &TuningSpace) -> Option<f64> {
        self.results
            .iter()
            .filter(|(p, _)| space.contains(p))
            .filter_map(|(_, r)| r.as_ref().ok().copied())
            .min_by(f64::total_cmp)
    }

    /// The measured result of `point`, if the cache holds it.
    pub fn result(&self, point: &Point) -> Option<&EvalResult> {
        self.results.get(point)
    }

    /// How many of the cache's configurations are valid configurations of `space` (linear
    /// in the entries, not in the space: a sparse cache of a space of 10^12 is counted at once).
    pub fn len_in(&self, space: &TuningSpace) -> usize {
        self.results.keys().filter(|p| space.contains(p)).count()
    }

    /// How many configurations the cache holds.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// True when the cache holds no configuration.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }
}

impl Evaluator for SimulationEvaluator {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.results
            .get(point)
            .cloned()
            .unwrap_or_else(|| Err(EvalFailure::new(NOT_IN_CACHE)))
    }
}

/// A measured space ready for simulation: the space (the cache's `tune_params` and the given
/// restrictions), the cache file and its evaluator.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// The tuning space.
    pub space: TuningSpace,
    /// The cache file.
    pub cache: CacheFile,
    /// The evaluator over the cache.
    pub evaluator: SimulationEvaluator,
    /// The best measured objective value in the space.
    pub optimum: f64,
    /// What loading left out, in words (restrictions over a problem size not known).
    pub notes: Vec<String>,
}

impl Simulation {
    /// Loads a cache file; `restrictions` is an optional JSON file of restrictions (an array
    /// of strings, or a T1 file whose `Conditions` are used, those over the problem size at
    /// the cache file's `problem_size` when it gives one with every axis at least 1, else at
    /// the T1 file's own). What was left out or taken instead is in [`Simulation::notes`].
    pub fn load(cache: &Path, restrictions: Option<&Path>) -> Result<Simulation, TuneError> {
        let path = cache;
        let cache = CacheFile::load(path)?;
        check_measured(path, &cache)?;
        // A size the cache does not give (or gives below 1 on an axis): the T1 file's own.
        let ps = &cache.problem_size;
        let size = (!ps.is_empty() && ps.iter().all(|&a| a >= 1)).then_some(ps.as_slice());
        let extra = match restrictions {
            Some(path) => load_restrictions(path, size)?,
            None => Restrictions::default(),
        };
        let mut notes = extra.notes;
        let mismatch = match (&extra.params, restrictions) {
            (Some(t1), Some(file)) => parameter_notes(file, t1, &cache),
            _ => Vec::new(),
        };
        if size.is_none() && !cache.problem_size.is_empty() && restrictions.is_some() {
            notes.push(format!(
                "the cache file's problem_size {:?} has an axis below 1: conditions over the problem size are taken at the restrictions file's own",
                cache.problem_size
            ));
        }
        let mut sim = match Simulation::from_cache(cache, extra.exprs) {
            // The restrictions do not fit this space: say where the files disagree.
            Err(e @ (TuneError::Space(_) | TuneError::EmptySpace)) if !mismatch.is_empty() => {
                let file = restrictions.unwrap_or(path);
                return Err(TuneError::KernelTuner(KtError::Format {
                    path: file.to_path_buf(),
                    message: format!("{e}; {}", mismatch.join("; ")),
                }));
            }
            // Conditions that rule out every configuration: name their file.
            Err(TuneError::EmptySpace) if restrictions.is_some() => {
                let file = restrictions.unwrap_or(path);
                return Err(TuneError::KernelTuner(KtError::Format {
                    path: file.to_path_buf(),
                    message: format!(
                        "its conditions leave no valid configuration of the parameters of {}",
                        path.display()
                    ),
                }));
            }
            Err(TuneError::NoSuccess) => {
                return Err(TuneError::KernelTuner(KtError::Format {
                    path: path.to_path_buf(),
                    message: "no entry is a successful configuration of the space: failures \
                              are strings such as \"InvalidConfig\" (in a T4 file, an \
                              `invalidity` other than \"correct\"), and values of 1e20 or \
                              more (older files' failures); entries with a value not among \
                              their parameter's values (a cache's tune_params), or breaking \
                              the restrictions, are not in the space"
                        .into(),
                }));
            }
            other => other?,
        };
        notes.extend(mismatch);
        notes.append(&mut sim.notes);
        sim.notes = notes;
        Ok(sim)
    }

    /// A simulation of `cache` restricted by `restrictions` (its measured values checked as
    /// [`Simulation::load`] does; an error names the cache by its kernel and device, as the
    /// file is not known here).
    pub fn from_cache(cache: CacheFile, restrictions: Vec<Expr>) -> Result<Simulation, TuneError> {
        let label = format!(
            "the cache file of kernel `{}` on `{}`",
            cache.kernel_name, cache.device_name
        );
        check_measured(Path::new(&label), &cache)?;
        let space = TuningSpace::new(cache.params.clone(), restrictions)?;
        if space.is_empty() {
            return Err(TuneError::EmptySpace);
        }
        let evaluator = SimulationEvaluator::new(&space, &cache);
        let optimum = evaluator.optimum(&space).ok_or(TuneError::NoSuccess)?;
        let notes = entry_notes(&cache);
        Ok(Simulation {
            space,
            cache,
            evaluator,
            optimum,
            notes,
        })
    }
}

/// Where a T1 file's `TuningParameters` and the cache file's `tune_params` disagree, in words:
/// the space is the cache's (what was measured) and only the T1 file's `Conditions` apply, so a
/// parameter or value that only one of them has is said (a T1 file of another kernel, or of
/// another version of it, restricts a space it was not written for).
fn parameter_notes(t1_path: &Path, t1: &[Parameter], cache: &CacheFile) -> Vec<String> {
    let file = t1_path.display();
    let mut notes = Vec::new();
    let names = |ps: &[Parameter]| ps.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
    let only_t1: Vec<String> = names(t1)
        .into_iter()
        .filter(|n| !cache.params.iter().any(|p| &p.name == n))
        .collect();
    let only_cache: Vec<String> = names(&cache.params)
        .into_iter()
        .filter(|n| !t1.iter().any(|p| &p.name == n))
        .collect();
    if !only_t1.is_empty() {
        notes.push(format!(
            "{file}: TuningParameters {} are not parameters of the cache file (the space is the cache file's; a condition over them is refused)",
            few(&only_t1)
        ));
    }
    if !only_cache.is_empty() {
        notes.push(format!(
            "{file}: the cache file's parameters {} are not among the TuningParameters (is the T1 file the same kernel's?)",
            few(&only_cache)
        ));
    }
    for p in &cache.params {
        let Some(q) = t1.iter().find(|q| q.name == p.name) else {
            continue;
        };
        // Indexed: a parameter may have many values (a T1 list holds up to 1,000,000).
        let (p_index, q_index) = (ValueIndex::new(&p.values), ValueIndex::new(&q.values));
        let missing: Vec<String> = p
            .values
            .iter()
            .filter(|v| !q_index.contains(&q.values, v))
            .map(|v| v.to_string())
            .collect();
        let extra: Vec<String> = q
            .values
            .iter()
            .filter(|v| !p_index.contains(&p.values, v))
            .map(|v| v.to_string())
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            let mut what = Vec::new();
            if !missing.is_empty() {
                what.push(format!("the cache's {} not in the T1 file", few(&missing)));
            }
            if !extra.is_empty() {
                what.push(format!("the T1 file's {} not in the cache", few(&extra)));
            }
            notes.push(format!(
                "{file}: the values of `{}` differ: {} (the space takes the cache file's)",
                p.name,
                what.join("; ")
            ));
        }
    }
    notes
}

/// The first items of a list, for a message: `a, b, c` or `a, b, ... (12 in all)`.
fn few(items: &[String]) -> String {
    const SHOWN: usize = 6;
    if items.len() <= SHOWN {
        items.join(", ")
    } else {
        format!(
            "{}, ... ({} in all)",
            items[..SHOWN].join(", "),
            items.len()
        )
    }
}

/// What the simulation makes of entries that do not read as Kernel Tuner writes them, in
/// words, one note per kind with a count and the first example: values that are not among
/// `tune_params`' (ignored), configurations recorded twice (the entry whose key sorts last is
/// used), and keys
/// that do not spell their entry's values (the values are used).
fn entry_notes(cache: &CacheFile) -> Vec<String> {
    let mut outside: Vec<String> = Vec::new();
    let mut twice: Vec<String> = Vec::new();
    let mut misspelt: Vec<String> = Vec::new();
    // By value, as the evaluator matches entries (`16` and `16.0` are one configuration).
    let mut seen: HashMap<Vec<kw_core::value::ValueKey>, &str> = HashMap::new();
    let indexes: Vec<ValueIndex> = cache
        .params
        .iter()
        .map(|p| ValueIndex::new(&p.values))
        .collect();
    for entry in &cache.entries {
        let undeclared = cache
            .params
            .iter()
            .zip(&indexes)
            .zip(&entry.values)
            .find(|((p, index), v)| !index.contains(&p.values, v))
            .map(|((p, _), v)| (p, v));
        if let Some((p, v)) = undeclared {
            outside.push(format!("`{}` ({}={v})", entry.key, p.name));
            continue;
        }
        if let Some(first) = seen.insert(entry.values.iter().map(Value::key).collect(), &entry.key)
        {
            twice.push(format!("`{first}` and `{}`", entry.key));
        }
        if !key_spells(&entry.key, &entry.values) {
            let values: Vec<String> = entry.values.iter().map(Value::to_string).collect();
            misspelt.push(format!("`{}` (values {})", entry.key, values.join(",")));
        }
    }
    let mut notes = Vec::new();
    let mut note = |list: &[String], what: &str| {
        if let Some(first) = list.first() {
            let n = list.len();
            let entries = if n == 1 { "entry" } else { "entries" };
            notes.push(format!("{n} cache {entries} {what} (e.g. {first})"));
        }
    };
    note(
        &outside,
        "with a value not among its parameter's `tune_params` values: ignored",
    );
    note(
        &twice,
        "with a configuration recorded under another key too: the one whose key sorts last is used",
    );
    note(
        &misspelt,
        "with a key that does not spell its parameter values: the values are used",
    );
    notes
}

/// Whether a cache key (`"16,1,1.5,True,float"`: Kernel Tuner joins the values with commas, as
/// Python prints them) spells `values`.
fn key_spells(key: &str, values: &[Value]) -> bool {
    if values
        .iter()
        .any(|v| matches!(v, Value::Str(s) if s.contains(',')))
    {
        return true; // a value with a comma of its own: the key cannot be split back
    }
    let parts: Vec<&str> = key.split(',').collect();
    parts.len() == values.len()
        && parts.iter().zip(values).all(|(part, v)| {
            let part = part.trim();
            match v {
                Value::Bool(b) => part.eq_ignore_ascii_case(if *b { "true" } else { "false" }),
                Value::Int(i) => part.parse::<f64>().is_ok_and(|x| x == *i as f64),
                Value::Float(f) => part.parse::<f64>().is_ok_and(|x| x == *f),
                Value::Str(s) => part == s,
            }
        })
}

/// Checks every measured value of `cache` (read from `path`) for a simulation: a positive
/// finite number, whatever the objective (a time in milliseconds, or another minimised
/// objective; a maximised one is kept as reciprocals, [`CacheFile::higher_is_better`]).
/// Failed configurations (Kernel Tuner writes a string such as `InvalidConfig`, or `1e20` in
/// older files) are failures, not values, and pass. A value of 0 or below would make the
/// fraction of the optimum (`optimum / best`) meaningless (NaN, infinite, negative or above 1).
/// [`Simulation::load`] checks its cache with it.
pub fn check_measured(path: &Path, cache: &CacheFile) -> Result<(), TuneError> {
    check_values(path, cache, |_| true)
}

/// Checks every measured value of `cache` (read from `path`) as a prior's: ranks need finite
/// values only, but a time must be positive (0 ms would rank first) and so must a value of a
/// higher-is-better file (ranked by its reciprocal). `kw tune --prior`, `kw simulate --prior`
/// and `--prior-family` check their files with it.
pub fn check_prior(path: &Path, cache: &CacheFile) -> Result<(), TuneError> {
    check_values(path, cache, |cache| {
        cache.objective == "time" || cache.higher_is_better
    })
}

/// [`check_measured`] and [`check_prior`]: finite values, positive where `positive` says.
fn check_values(
    path: &Path,
    cache: &CacheFile,
    positive: impl Fn(&CacheFile) -> bool,
) -> Result<(), TuneError> {
    let positive = positive(cache);
    for entry in &cache.entries {
        let Outcome::Value(v) = entry.outcome else {
            continue;
        };
        if v.is_finite() && (v > 0.0 || !positive) {
            continue;
        }
        let problem = if !v.is_finite() {
            "is not a finite number"
        } else if cache.objective == "time" {
            "is not a valid time (a positive number of milliseconds)"
        } else if cache.higher_is_better {
            "is not positive, and the file says higher is better \
             (`objective_higher_is_better`), which needs positive values"
        } else {
            "is not positive: kw simulate minimises the objective and scores optimum / best \
             found, a ratio that needs positive values (a maximised objective with positive \
             values, such as a throughput, is marked `\"objective_higher_is_better\": true`; \
             one that takes both signs cannot be scored as a ratio)"
        };
        let config: Vec<String> = cache
            .params
            .iter()
            .zip(&entry.values)
            .map(|(p, v)| format!("{}={v}", p.name))
            .collect();
        return Err(TuneError::KernelTuner(KtError::Format {
            path: path.to_path_buf(),
            message: format!(
                "configuration `{}` ({}): `{}` {v} {problem}; a failed configuration is \
                 recorded as a string such as \"InvalidConfig\" (in a T4 file: an \
                 `invalidity` other than \"correct\")",
                entry.key,
                config.join(", "),
                cache.objective
            ),
        }));
    }
    Ok(())
}

/// The scores of one strategy over seeded runs.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// The strategy's name.
    pub strategy: String,
    /// Evaluations per run.
    pub budget: u64,
    /// `optimum / best_found` per seed (0 when nothing succeeded), seeds `0..`.
    pub fractions: Vec<f64>,
}

impl BenchResult {
    /// The mean fraction.
    pub fn mean(&self) -> f64 {
        self.fractions.iter().sum::<f64>() / self.fractions.len().max(1) as f64
    }

    /// The smallest fraction.
    pub fn min(&self) -> f64 {
        self.fractions.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The largest fraction.
    pub fn max(&self) -> f64 {
        self.fractions.iter().copied().fold(0.0, f64::max)
    }

    /// How many runs found the optimum.
    pub fn optimum_hits(&self) -> usize {
        self.fractions.iter().filter(|&&f| f >= 1.0).count()
    }
}

/// Runs strategy `name` with seeds `0..seeds`, each with a budget of `budget` distinct
/// evaluations, and scores each run by `optimum / best_found`.
pub fn benchmark(
    sim: &Simulation,
    name: &str,
    budget: u64,
    seeds: u64,
) -> Result<BenchResult, TuneError> {
    benchmark_seeds(sim, name, &Seeding::default(), budget, 0..seeds, 1)
}

/// Like [`benchmark`] for the given seeds, running up to `threads` seeds at once, each run
/// seeded with `prior` (empty: none; [`strategies::create_seeded`]).
pub fn benchmark_seeds(
    sim: &Simulation,
    name: &str,
    prior: &Seeding,
    budget: u64,
    seeds: std::ops::Range<u64>,
    threads: usize,
) -> Result<BenchResult, TuneError> {
    strategies::create(name, 0)?;
    let seeds: Vec<u64> = seeds.collect();
    let run = |seed: u64| -> Result<f64, TuneError> {
        let mut strategy = strategies::create_seeded(name, seed, prior)?;
        let mut evaluator = sim.evaluator.clone();
        let report = Tuner::new(&sim.space, Stop::Evaluations(budget))
            .run(&mut *strategy, &mut evaluator)?;
        Ok(report.best.map_or(0.0, |(_, best)| sim.optimum / best))
    };
    let fractions = parallel(&seeds, threads, run)?;
    Ok(BenchResult {
        strategy: name.to_string(),
        budget,
        fractions,
    })
}

/// `f` over `items`, `threads` at once, results in the order of `items`.
pub(crate) fn parallel<T: Send>(
    items: &[u64],
    threads: usize,
    f: impl Fn(u64) -> Result<T, TuneError> + Sync,
) -> Result<Vec<T>, TuneError> {
    let threads = threads.clamp(1, items.len().max(1));
    let mut slots: Vec<Option<T>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|scope| -> Result<(), TuneError> {
        let f = &f;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..items.len())
                        .step_by(threads)
                        .map(|i| f(items[i]).map(|r| (i, r)))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        for h in handles {
            let part = h.join().map_err(|_| TuneError::Fatal {
                config: String::new(),
                reason: "a simulation thread panicked".into(),
            })??;
            for (i, r) in part {
                slots[i] = Some(r);
            }
        }
        Ok(())
    })?;
    Ok(slots.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache file of one parameter `a` (1, 2, 3) whose entries have these `time` values
    /// (JSON text: numbers or failure strings), under objective `objective`.
    fn write_cache(test: &str, objective: &str, times: [&str; 3]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kw-tune-sim-{test}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let cache: Vec<String> = times
            .iter()
            .enumerate()
            .map(|(i, t)| format!(r#""{n}":{{"a":{n},"{objective}":{t}}}"#, n = i + 1))
            .collect();
        let text = format!(
            r#"{{"tune_params_keys":["a"],"tune_params":{{"a":[1,2,3]}},"objective":"{objective}","cache":{{{}}}}}"#,
            cache.join(",")
        );
        let path = dir.join("cache.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Entries that do not read as Kernel Tuner writes them are noted, with a count and an
    /// example each (they were dropped or overwritten silently); a well-formed cache has none.
    #[test]
    fn odd_entries_are_noted() {
        let dir = std::env::temp_dir().join(format!("kw-tune-sim-odd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cache.json");
        let cache = |entries: &str| {
            format!(
                r#"{{"tune_params_keys":["a","b"],"tune_params":{{"a":[1,2,4],"b":[1.5,2.0,true]}},"cache":{{{entries}}}}}"#
            )
        };
        let good = r#""1,1.5":{"a":1,"b":1.5,"time":1.0},"2,2.0":{"a":2,"b":2.0,"time":2.0},"4,True":{"a":4,"b":true,"time":3.0}"#;
        std::fs::write(&path, cache(good)).unwrap();
        assert_eq!(
            Simulation::load(&path, None).unwrap().notes,
            Vec::<String>::new()
        );
        let odd = format!(
            r#"{good},"4,2.0":{{"a":8,"b":2.0,"time":0.5}},"9,1.5":{{"a":2,"b":1.5,"time":3.0}},"2,1.5":{{"a":2,"b":1.5,"time":0.9}}"#
        );
        std::fs::write(&path, cache(&odd)).unwrap();
        let sim = Simulation::load(&path, None).unwrap();
        let notes = sim.notes.join("\n");
        assert_eq!(sim.notes.len(), 3, "{notes}");
        assert!(notes.contains("1 cache entry with a value not among its parameter's `tune_params` values: ignored (e.g. `4,2.0` (a=8))"), "{notes}");
        assert!(notes.contains("1 cache entry with a configuration recorded under another key too: the one whose key sorts last is used (e.g. `2,1.5` and `9,1.5`)"), "{notes}");
        assert!(notes.contains("1 cache entry with a key that does not spell its parameter values: the values are used (e.g. `9,1.5` (values 2,1.5))"), "{notes}");
        // The undeclared value is not a configuration; the repeated one is `9,1.5`'s 3.0.
        assert_eq!(sim.optimum, 1.0);
        // One configuration written `2.0` and `2`: the same (the evaluator keeps one), said.
        let twice = format!(
            r#"{good},"1,2":{{"a":1,"b":2,"time":0.25}},"1,2.0":{{"a":1,"b":2.0,"time":9.0}}"#
        );
        std::fs::write(&path, cache(&twice)).unwrap();
        let notes = Simulation::load(&path, None).unwrap().notes.join("\n");
        assert!(notes.contains("recorded under another key too"), "{notes}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A T1 file whose `TuningParameters` differ from the cache's `tune_params` is said, with
    /// the parameters and values only one of them has (only its `Conditions` were read); when
    /// its conditions cannot apply to the cache's space, the error says where they disagree.
    #[test]
    fn a_t1_file_of_other_parameters_is_said() {
        let cache = write_cache("t1", "time", ["1", "2", "3"]);
        let dir = cache.parent().unwrap();
        let t1 = |params: &str, condition: &str| {
            let path = dir.join("k_T1.json");
            std::fs::write(
                &path,
                format!(
                    r#"{{"General":{{"FormatVersion":1}},"ConfigurationSpace":{{"TuningParameters":[{params}],"Conditions":[{{"Expression":"{condition}","Parameters":[]}}]}}}}"#
                ),
            )
            .unwrap();
            path
        };
        let a = |values: &str| {
            format!(r#"{{"Name":"a","Type":"int","Values":"{values}","Default":1}}"#)
        };
        let same = t1(&a("[1, 2, 3]"), "a != 2");
        let sim = Simulation::load(&cache, Some(&same)).unwrap();
        assert!(sim.notes.is_empty(), "{:?}", sim.notes);
        assert_eq!(sim.space.len(), 2);
        let other = t1(
            &format!(
                r#"{},{{"Name":"b","Type":"int","Values":"[1]","Default":1}}"#,
                a("[1, 2, 7]")
            ),
            "a != 2",
        );
        let notes = Simulation::load(&cache, Some(&other))
            .unwrap()
            .notes
            .join("\n");
        assert!(
            notes.contains("TuningParameters b are not parameters of the cache file"),
            "{notes}"
        );
        assert!(notes.contains("the values of `a` differ: the cache's 3 not in the T1 file; the T1 file's 7 not in the cache"), "{notes}");
        let foreign = t1(
            r#"{"Name":"c","Type":"int","Values":"[1]","Default":1}"#,
            "c == 1",
        );
        let err = Simulation::load(&cache, Some(&foreign))
            .unwrap_err()
            .to_string();
        assert!(err.contains("mentions unknown parameter `c`"), "{err}");
        assert!(
            err.contains("the cache file's parameters a are not among the TuningParameters"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn times_of_zero_or_below_are_refused_naming_file_and_configuration() {
        for (bad, shown) in [("0", "0"), ("-1.5", "-1.5"), ("-0.0", "-0")] {
            let path = write_cache("bad", "time", [bad, "1", "2"]);
            let err = Simulation::load(&path, None).unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains("configuration `1` (a=1)"), "{err}");
            assert!(
                err.contains(&format!("`time` {shown} is not a valid time")),
                "{err}"
            );
            let _ = std::fs::remove_dir_all(path.parent().unwrap());
        }
    }

    #[test]
    fn failures_pass_and_other_objectives_must_be_positive_to_simulate() {
        let path = write_cache(
            "failures",
            "time",
            [r#""InvalidConfig""#, r#""CompilationFailedConfig""#, "2"],
        );
        let sim = Simulation::load(&path, None).expect("failures are not values");
        assert_eq!(sim.optimum, 2.0);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        // Older files mark a failure as 1e20.
        let path = write_cache("old", "time", ["1e20", "1", "2"]);
        assert_eq!(Simulation::load(&path, None).unwrap().optimum, 1.0);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        // Another objective's values must be positive to simulate (optimum / best found of
        // -3 and 2 would score above 1); as a prior they need only be finite (ranks).
        let path = write_cache("score", "score", ["-3", "0", "2"]);
        let Err(e) = Simulation::load(&path, None) else {
            panic!("a negative value simulated")
        };
        let e = e.to_string();
        assert!(e.contains("is not positive"), "{e}");
        let cache = CacheFile::load(&path).unwrap();
        check_prior(&path, &cache).expect("a prior's values need only be finite");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        let path = write_cache("positive", "score", ["3", "1.5", "2"]);
        assert_eq!(Simulation::load(&path, None).unwrap().optimum, 1.5);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    /// Every shared measured space (`../shared/data/tuning-spaces`, and its `small/`) still
    /// loads for simulation, its family's restrictions applied: their failures are strings,
    /// their times positive.
    #[test]
    fn the_shared_spaces_still_load() {
        let dir = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/tuning-spaces"
        ));
        if !dir.is_dir() {
            println!("SKIPPED: ../shared not found");
            return;
        }
        let mut loaded = 0;
        for d in [dir.clone(), dir.join("small")] {
            for entry in crate::suite::discover(&d).expect("a suite directory") {
                let sim = Simulation::load(&entry.cache, entry.t1.as_deref())
                    .unwrap_or_else(|e| panic!("{}: {e}", entry.cache.display()));
                assert!(sim.optimum > 0.0, "{}", entry.cache.display());
                loaded += 1;
            }
        }
        assert!(loaded >= 15, "only {loaded} spaces found");
    }

    #[test]
    fn a_cache_built_in_memory_is_checked_too() {
        let path = write_cache("memory", "time", ["1", "0", "2"]);
        let cache = CacheFile::load(&path).unwrap();
        let err = Simulation::from_cache(cache, Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("configuration `2` (a=2)"), "{err}");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
