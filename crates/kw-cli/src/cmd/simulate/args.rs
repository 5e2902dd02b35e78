//! `kw simulate`'s arguments ([`SimulateArgs`]: strategies, budgets, seeds, priors) and the
//! priors they name, shared by the run on one space and the suite.

use anyhow::{bail, Context, Result};
use clap::Args;
use kw_tune::prior::{self, PriorParams, PriorSource, Seeding};
use kw_tune::strategies;
use std::path::PathBuf;

/// The most seeded runs per strategy and budget (`--seeds`): each seed is a whole simulated
/// run, and the seeds are listed in memory.
pub const MAX_SEEDS: u64 = 100_000;

/// The largest budget (`--budget`, `--budgets`): the suite keeps a best-so-far curve of this
/// many values per run (and random search's), so memory grows with it.
pub const MAX_BUDGET: u64 = 1_000_000;

#[derive(Args)]
pub struct SimulateArgs {
    /// A Kernel Tuner cache file (.json or .json.gz) or a T4 results file, with every
    /// configuration measured.
    #[arg(required_unless_present = "suite", conflicts_with = "suite")]
    pub(super) cache: Option<PathBuf>,
    /// Score on every space of this directory (`<family>_<device>.json.gz`, restricted by
    /// `<family>_T1.json` when present): per space and mean, the final fraction and the area
    /// under the best-so-far curve at each budget.
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// With --suite: only these spaces (comma-separated families or space names).
    #[arg(long, value_delimiter = ',', requires = "suite")]
    pub spaces: Vec<String>,
    /// A file of restrictions: a JSON array of strings, or a T1 file (its Conditions). Not
    /// with --suite, which reads each family's T1 file.
    #[arg(long, conflicts_with_all = ["t1", "suite"])]
    pub(super) restrictions_json: Option<PathBuf>,
    /// A T1 file whose Conditions restrict the space. Not with --suite, which reads each
    /// family's `<family>_T1.json`.
    #[arg(long, conflicts_with = "suite")]
    pub(super) t1: Option<PathBuf>,
    /// Strategy name(s), comma-separated, or `all` (default: the default strategy).
    #[arg(long)]
    pub strategy: Option<String>,
    /// Evaluations per run (distinct configurations, failed ones included; 1 to 1000000).
    #[arg(long, conflicts_with = "budgets", value_parser = clap::value_parser!(u64).range(1..=MAX_BUDGET))]
    pub budget: Option<u64>,
    /// Several budgets, comma-separated (e.g. 25,50,100,200,400; each 1 to 1000000): prints
    /// the full table.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=MAX_BUDGET))]
    pub budgets: Vec<u64>,
    /// Seeded runs per strategy and budget (seeds 0..K; 1 to 100000).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=MAX_SEEDS))]
    pub seeds: u64,
    /// The first seed (seeds FIRST..FIRST+K), e.g. to tune on seeds other than those reported.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Seeds simulated at once (threads, 1 or more); default: the number of CPUs.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub threads: Option<usize>,
    /// Print one JSON array, one object per strategy (and budget, and space with --suite).
    #[arg(long)]
    pub json: bool,
    /// Earlier results of the same kernel (other devices or sizes): Kernel Tuner cache files,
    /// T4 results files, kw results logs or wisdom files. Each strategy then runs without and
    /// with them (row `NAME+prior`: their best configurations, mapped into this space,
    /// evaluated first).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub prior: Vec<PathBuf>,
    /// With --suite: each space's prior is the other spaces of its family
    /// (leave-one-device-out), as with --prior.
    #[arg(long, requires = "suite", conflicts_with = "prior")]
    pub prior_family: bool,
    /// How priors seed the search, for experiments: `take=N:rank=robin|mean:share=blind|design|extra|lateN|trustN|forgetN|mixN:feature=0|1:agree=K:agreetake=0|1:stop=N:local=N:localmix=N:gate=N:guided=0|1`
    /// (docs/strategies.md; `share=` sets the share alone: `share=mix1` is the default without
    /// the neighbours); several give one row each (`NAME+prior(SETTINGS)`). Default: the
    /// chosen settings (with a prior of the tuned device: `local=8`, no gate, in the seed's
    /// order).
    #[arg(long)]
    pub prior_settings: Vec<String>,
    /// With priors: skip the runs without them.
    #[arg(long)]
    pub prior_only: bool,
    /// With --suite: proposals queued ahead of the results, as `kw tune` compiling ahead
    /// keeps up to its compile threads + 1 (1: ask, evaluate, tell, as Kernel Tuner's
    /// simulation mode does; 1 to 1024).
    /// Default 1.
    #[arg(long, requires = "suite", value_parser = parse_lookahead)]
    pub lookahead: Option<usize>,
}

/// The most proposals queued ahead (`--lookahead`); `kw tune` queues at most its compile
/// threads + 1.
pub const MAX_LOOKAHEAD: usize = 1024;

/// Parses `--lookahead`: 1 to [`MAX_LOOKAHEAD`].
fn parse_lookahead(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_LOOKAHEAD).contains(&n) => Ok(n),
        Ok(n) => Err(format!(
            "{n} proposals ahead: give 1 (ask, evaluate, tell) to {MAX_LOOKAHEAD}"
        )),
        Err(e) => Err(format!("{text:?}: {e}")),
    }
}

/// One way to run a strategy: its name, and the prior settings (`None`: no prior).
#[derive(Clone, Debug)]
pub struct Run {
    /// The strategy.
    pub name: String,
    /// Prior settings, when seeded by the prior (`None` inside: the chosen ones,
    /// [`PriorParams::for_device`]).
    pub prior: Option<Option<PriorParams>>,
    /// The row's label.
    pub label: String,
}

impl SimulateArgs {
    /// The strategies to score (each checked to exist).
    pub fn names(&self) -> Result<Vec<String>> {
        let names: Vec<String> = match self.strategy.as_deref() {
            None => vec![strategies::DEFAULT.to_string()],
            Some("all") => strategies::all().iter().map(|s| s.to_string()).collect(),
            Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
        };
        for n in &names {
            strategies::create(n, 0)?;
        }
        Ok(names)
    }

    /// Whether priors are given.
    pub fn has_prior(&self) -> bool {
        !self.prior.is_empty() || self.prior_family
    }

    /// Every strategy without and with the prior (when given; see [`SimulateArgs::prior`]).
    pub fn runs(&self) -> Result<Vec<Run>> {
        let mut settings: Vec<(Option<PriorParams>, String)> = Vec::new();
        for text in &self.prior_settings {
            let p = PriorParams::parse(text)
                .map_err(|m| anyhow::anyhow!("--prior-settings {text}: {m}"))?;
            settings.push((Some(p), format!("+prior({text})")));
        }
        if settings.is_empty() {
            settings.push((None, "+prior".to_string()));
        }
        if !self.has_prior() && !self.prior_settings.is_empty() {
            bail!("--prior-settings needs --prior or --prior-family");
        }
        if !self.has_prior() && self.prior_only {
            bail!("--prior-only needs --prior or --prior-family (it skips the runs without them)");
        }
        let mut runs = Vec::new();
        for name in self.names()? {
            if !self.has_prior() || !self.prior_only {
                runs.push(Run {
                    name: name.clone(),
                    prior: None,
                    label: name.clone(),
                });
            }
            if self.has_prior() {
                for (p, suffix) in &settings {
                    runs.push(Run {
                        name: name.clone(),
                        prior: Some(*p),
                        label: format!("{name}{suffix}"),
                    });
                }
            }
        }
        Ok(runs)
    }

    /// The budgets, ascending.
    pub fn budgets(&self) -> Result<Vec<u64>> {
        let mut budgets = match (self.budget, self.budgets.is_empty()) {
            (Some(b), _) => vec![b],
            (None, false) => self.budgets.clone(),
            (None, true) => bail!("give --budget N or --budgets N,M,..."),
        };
        if let Some(b) = budgets.iter().find(|&&b| !(1..=MAX_BUDGET).contains(&b)) {
            bail!("budget {b}: budgets must be 1 to {MAX_BUDGET}");
        }
        budgets.sort_unstable();
        budgets.dedup();
        self.seed_range()?;
        Ok(budgets)
    }

    /// The seeds, `first_seed..first_seed + seeds` (checked: at least one, at most
    /// [`MAX_SEEDS`], and not past the largest seed).
    pub fn seed_range(&self) -> Result<std::ops::Range<u64>> {
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            bail!("--seeds {}: give 1 to {MAX_SEEDS} seeded runs", self.seeds);
        }
        let Some(end) = self.first_seed.checked_add(self.seeds) else {
            bail!(
                "--first-seed {} with --seeds {}: the seeds would go past the largest seed {} \
                 (give a --first-seed of at most {})",
                self.first_seed,
                self.seeds,
                u64::MAX - 1,
                u64::MAX - self.seeds
            );
        };
        Ok(self.first_seed..end)
    }

    /// Seeds simulated at once (at least 1).
    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// Reads prior files (see [`SimulateArgs::prior`]).
pub fn load_priors(files: &[PathBuf]) -> Result<Vec<PriorSource>> {
    let mut sources = Vec::new();
    for f in files {
        sources.extend(prior::load(f).context("reading a prior")?);
    }
    Ok(sources)
}

/// What seeds the runs of `settings` in `space`, the space measured on `device` (nothing
/// without settings; `Some(None)`: the chosen settings); with `tell`, says on stderr how
/// many results matched and what was ignored.
pub fn prior_points(
    sources: &[PriorSource],
    space: &kw_core::space::TuningSpace,
    device: &str,
    settings: Option<Option<PriorParams>>,
    tell: bool,
) -> Seeding {
    let Some(settings) = settings else {
        return Seeding::default();
    };
    let settings = settings.unwrap_or_else(|| PriorParams::for_device(sources, device));
    let mapped = prior::map(sources, space, settings);
    if tell {
        if let (prior::PriorShare::Trust(t), false) = (settings.share, mapped.points.is_empty()) {
            if let Some(words) = t.climb_words() {
                eprintln!("prior: {words}");
            }
        }
        eprintln!(
            "prior: {} of {} results match this space; {} configurations evaluated first",
            mapped.matched,
            mapped.total,
            mapped.points.len()
        );
        for note in &mapped.notes {
            eprintln!("prior: note: {}", kw_core::diag::one_line(note, 4000));
        }
    }
    mapped.seeding()
}

/// Warns (on standard error) when the cache file `cache` of space `name` holds no entry for
/// some valid configurations of its space: they are scored as failures, and the fractions
/// are of the best the file holds. `hint`: what to add when no restrictions were given.
pub fn warn_missing(
    cache: &std::path::Path,
    name: &str,
    sim: &kw_tune::simulate::Simulation,
    hint: &str,
) {
    let total = sim.space.len();
    let missing = total.saturating_sub(sim.evaluator.len_in(&sim.space) as u128);
    if missing > 0 {
        eprintln!(
            "kw simulate: warning: {}: {missing} of the {total} valid configurations of `{name}` \
             have no entry in the cache file (scored as failures){hint}",
            cache.display(),
        );
    }
}
