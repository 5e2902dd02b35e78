//! Priors: results of the same kernel measured elsewhere (other devices, other problem sizes)
//! that seed a search. A user tuning a kernel on a new GPU nearly always has such results:
//! Kernel Tuner cache files, kw results logs, wisdom files. They do not replace the search:
//! their best configurations, mapped into this space, are evaluated first; the strategy is
//! told those results only while that pays in the run itself, and otherwise runs as without
//! them ([`crate::strategies::seeded`], [`PriorShare::Trust`]).
//!
//! Parameters are matched by name. A prior's configuration with a value this space does not
//! declare, or that breaks this space's restrictions, is ignored; a parameter the prior lacks
//! takes this space's default value; a parameter only the prior has is ignored. Each of these
//! is reported once per source as a note ([`MappedPrior::notes`]).
//!
//! How the prior's results become proposals was chosen by leave-one-device-out on the shared
//! spaces (`docs/strategies.md`): [`PriorParams::default`].

pub mod agreement;

use crate::error::TuneError;
use crate::log::read_log;
use crate::strategy::PriorScores;
use kw_core::kernel_tuner::{CacheFile, Outcome};
use kw_core::wisdom::WisdomFile;
use kw_core::{config::Config, space::Point, space::TuningSpace};
use std::collections::HashMap;
use std::path::Path;

/// The results of one prior source (one device and problem size): configurations by name
/// and their objective (lower is better; `None` when it failed).
#[derive(Clone, Debug, PartialEq)]
pub struct PriorSource {
    /// Where it comes from, for notes: the file, and the device when known.
    pub label: String,
    /// The device's name (empty when unknown).
    pub device: String,
    /// The kernel's name as the source records it (a Kernel Tuner cache's `kernel_name`, a
    /// results log's); empty when unknown (a wisdom record, found by its tuning key).
    pub kernel: String,
    /// The problem size its results were measured at (empty when unknown).
    pub problem_size: Vec<i64>,
    /// The results.
    pub results: Vec<(Config, Option<f64>)>,
}

impl PriorSource {
    /// The entries of a Kernel Tuner cache file.
    pub fn from_cache(path: &Path, cache: &CacheFile) -> PriorSource {
        let names: Vec<String> = cache.params.iter().map(|p| p.name.clone()).collect();
        let results = cache
            .entries
            .iter()
            .map(|e| {
                let config = Config(names.iter().cloned().zip(e.values.clone()).collect());
                let value = match &e.outcome {
                    Outcome::Value(v) if v.is_finite() => Some(*v),
                    _ => None,
                };
                (config, value)
            })
            .collect();
        PriorSource {
            label: labelled(path, &cache.device_name),
            device: cache.device_name.clone(),
            kernel: cache.kernel_name.clone(),
            problem_size: cache.problem_size.clone(),
            results,
        }
    }
}

fn labelled(path: &Path, device: &str) -> String {
    if device.is_empty() {
        path.display().to_string()
    } else {
        format!("{} ({device})", path.display())
    }
}

/// Checks that a prior file can be read: a file that cannot be opened, or is not a regular
/// file (a FIFO is refused, never waited on; a directory, a device), is said as such, not as
/// three formats it is not. Each format's reader enforces its own size cap. `kw tune` asks
/// before it moves an earlier results log aside.
pub fn check_readable(path: &Path) -> Result<(), TuneError> {
    let rules = kw_core::files::ReadRules::new("prior", u64::MAX);
    match kw_core::files::open_regular(path, rules) {
        Ok(_) => Ok(()),
        Err(e) => Err(TuneError::Prior {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        }),
    }
}

/// Reads a prior file: a Kernel Tuner cache file (`.json`, `.json.gz`) or T4 results file, a
/// kw results log (`.jsonl`) or a wisdom file (one source per record: each its device's and
/// problem size's best configuration).
pub fn load(path: &Path) -> Result<Vec<PriorSource>, TuneError> {
    check_readable(path)?;
    let log_error = match read_log(path) {
        Ok(log) => {
            let results = log
                .records
                .iter()
                .map(|r| (r.config.clone(), r.objective.filter(|v| v.is_finite())))
                .collect();
            let device = log.header.device_name.unwrap_or_default();
            return Ok(vec![PriorSource {
                label: labelled(path, &device),
                device,
                kernel: log.header.kernel_name.unwrap_or_default(),
                problem_size: log.header.problem_size.unwrap_or_default(),
                results,
            }]);
        }
        Err(e) => e.to_string(),
    };
    let wisdom_error = match WisdomFile::load(path) {
        Ok(w) => {
            if !w.rejected.is_empty() {
                kw_core::diag::warn(&format!(
                    "prior {}: {} record(s) left out: {}",
                    path.display(),
                    w.rejected.len(),
                    w.rejected.join("; ")
                ));
            }
            return Ok(wisdom_sources(path, &w));
        }
        Err(e) => e.to_string(),
    };
    match CacheFile::load(path) {
        Ok(cache) => {
            // A time of 0 or below would rank first: refused as `kw simulate` refuses it.
            crate::simulate::check_prior(path, &cache)?;
            Ok(vec![PriorSource::from_cache(path, &cache)])
        }
        Err(cache_error) => Err(TuneError::Prior {
            path: path.to_path_buf(),
            message: format!(
                "not a Kernel Tuner cache file or T4 results file ({cache_error}), a results log ({log_error}) or a wisdom file ({wisdom_error})"
            ),
        }),
    }
}

/// The sources of a wisdom file: one per record (its device's and problem size's best
/// configuration).
pub fn wisdom_sources(path: &Path, wisdom: &WisdomFile) -> Vec<PriorSource> {
    wisdom
        .records
        .iter()
        .map(|r| {
            let (score, _) = r.objective.scores(&r.objective);
            let size: Vec<String> = r.problem_size.iter().map(i64::to_string).collect();
            PriorSource {
                label: format!(
                    "{} ({}, problem size {})",
                    path.display(),
                    r.device.name,
                    size.join("x")
                ),
                device: r.device.name.clone(),
                kernel: String::new(),
                problem_size: r.problem_size.clone(),
                results: vec![(r.config.clone(), Some(score))],
            }
        })
        .collect()
}

/// Orders `sources` for a run on the device named `device` at `problem_size`: the sources of
/// that device first, then the others; within each, the nearest problem size first (the
/// selection's log distance, [`kw_core::wisdom::log_distance`]; a source of unknown size
/// last), the given order on ties. The round robin of [`map`] takes the best of each source
/// in this order, so with many sources (a wisdom file of many sizes) the records nearest the
/// run's are evaluated first, the record of the same size (a retune) before any other.
pub fn nearest_first(sources: &mut [PriorSource], device: &str, problem_size: &[i64]) {
    let key = |s: &PriorSource| {
        let distance = if s.problem_size.is_empty() {
            f64::INFINITY
        } else {
            // In millionths, as the selection compares them: sizes a factor 4 below and
            // above are as near, whatever the rounding of their logarithms.
            (kw_core::wisdom::log_distance(&s.problem_size, problem_size) * 1e6).round()
        };
        (s.device != device, distance)
    };
    sources.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
}

/// Notes for the sources whose recorded kernel is not `kernel` (the kernel being tuned; names
/// compared as written, a source or a run that does not know its kernel's name is not noted):
/// such results are used where their parameter names match this space's, which is right for
/// a renamed kernel and wrong for another one, so the user is told which source it is.
pub fn kernel_notes(sources: &[PriorSource], kernel: &str) -> Vec<String> {
    if kernel.is_empty() {
        return Vec::new();
    }
    sources
        .iter()
        .filter(|s| !s.kernel.is_empty() && s.kernel != kernel)
        .map(|s| {
            let name = |k: &str| kw_core::diag::one_line(k, 100);
            format!(
                "{}: results of kernel `{}`, not `{}`: used where their parameter names \
                 match this space's (leave the file out if it is another kernel's)",
                s.label,
                name(&s.kernel),
                name(kernel)
            )
        })
        .collect()
}

/// How a prior's results are ranked into proposals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorRank {
    /// The best of each source in turn, then the second best of each, and so on.
    RoundRobin,
    /// By the mean over sources of each configuration's rank fraction (0 best, 1 worst).
    MeanRank,
}

/// How a prior seeds a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PriorParams {
    /// How many of the prior's best configurations are evaluated first (over all sources).
    pub take: usize,
    /// How they are ranked.
    pub rank: PriorRank,
    /// What the strategy is told of the prior's results.
    pub share: PriorShare,
    /// The prior's score of every configuration it holds (mean rank fraction over sources)
    /// is a feature of the strategy's model ([`crate::Strategy::set_prior_scores`]).
    pub feature: bool,
    /// With [`PriorShare::Trust`]: extra patience when the sources agree
    /// ([`agreement::agreement`]: `a`, the least rank correlation between two sources):
    /// `round(agree * clamp(2a - 1, 0, 1))` more told results without improvement before the
    /// blind strategy takes over (a correlation of 0.5 or less adds nothing; 0: off). For
    /// experiments: it hurt a device unlike two agreeing sources (`docs/strategies.md`).
    pub agree: usize,
    /// `take` scaled by the sources' agreement (`clamp(a, 0, 1)`, at least one per source;
    /// unscaled when the agreement is unknown). For experiments (lower means).
    pub agree_take: bool,
}

/// What a seeded strategy is told of the prior's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorShare {
    /// Nothing: it runs as without a prior (a result it proposes again is answered from the
    /// run's cache, for free); the prior only adds its configurations first.
    Blind,
    /// Everything, as results of its own initial design (they replace part of it).
    Design,
    /// Everything, but its initial design follows whole ([`crate::Strategy::tell_prior`]).
    Extra,
    /// Nothing until it has made this many evaluations of its own, then everything.
    Late(usize),
    /// Everything, while it pays: once `patience` of its proposals (after its initial design)
    /// in a row have not improved the best so far (prior results included), the same
    /// strategy never told of the prior takes over for good; it knows the initial design's
    /// results, and the told strategy's other results unless `forget` (the default, with
    /// `mix` and patience 1: [`PriorParams::default`]).
    Trust(TrustSettings),
}

/// See [`PriorShare::Trust`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustSettings {
    /// The told strategy's results in a row (after the initial design) that do not improve
    /// the best so far before the blind one takes over.
    pub patience: usize,
    /// The blind strategy is not told the told strategy's proposals (but the design).
    pub forget: bool,
    /// The told strategy counts the prior's results as its initial design; the blind one's
    /// design is proposed by it, alternating with the told strategy's proposals.
    pub mix: bool,
    /// The prior's configurations in a row that do not improve the best so far after which
    /// the rest of them are not evaluated (0: all are). For experiments.
    pub stop: usize,
    /// After the prior's configurations, up to this many adjacent neighbours (one parameter
    /// one value away) of the best configuration so far in a row that do not improve it, told
    /// as the prior's (0: none).
    pub local: usize,
    /// The neighbours take the told strategy's turns, alternating with the blind design
    /// (with `mix`), instead of coming first. For experiments.
    pub local_mix: bool,
    /// With `local`: the neighbours are tried only when one of the prior's last `gate`
    /// results improved the best so far (0: always).
    pub gate: usize,
    /// With `local`: the neighbour the prior ranks best is tried first (the mean over
    /// sources of its rank fraction; one no source measured counts as the middle), instead
    /// of one in an order drawn from the run's seed.
    pub guided: bool,
}

impl TrustSettings {
    /// What follows the prior's configurations, in words (`None`: the told strategy).
    pub fn climb_words(&self) -> Option<String> {
        (self.local > 0).then(|| {
            let turns = if self.local_mix {
                " (in the told strategy's turns)"
            } else {
                ""
            };
            let gate = if self.gate > 0 {
                format!(
                    ", if one of the prior's last {} results improved the best",
                    self.gate
                )
            } else {
                String::new()
            };
            let order = if self.guided {
                " (those the prior ranks best first)"
            } else {
                ""
            };
            format!(
                "then{turns} up to {} neighbours of the best configuration{order} in a row that do not improve it{gate}",
                self.local
            )
        })
    }
}

impl Default for PriorParams {
    /// The settings chosen by leave-one-device-out (`docs/strategies.md`): the 12 best
    /// configurations (round robin over sources); then the neighbours of the best so far,
    /// those the prior ranks best first, while they improve it (until 4 misses in a row), if
    /// one of the prior's last 8 results improved the best; then [`PriorShare::Trust`],
    /// mixed, with patience 1 and `forget`.
    fn default() -> PriorParams {
        PriorParams {
            take: 12,
            rank: PriorRank::RoundRobin,
            share: PriorShare::Trust(TrustSettings {
                patience: 1,
                forget: true,
                mix: true,
                stop: 0,
                local: DEFAULT_LOCAL,
                local_mix: false,
                gate: DEFAULT_GATE,
                guided: true,
            }),
            feature: false,
            agree: 0,
            agree_take: false,
        }
    }
}

/// [`TrustSettings::local`] by default (other devices' priors).
pub const DEFAULT_LOCAL: usize = 4;
/// [`TrustSettings::gate`] by default (other devices' priors).
pub const DEFAULT_GATE: usize = 8;
/// [`TrustSettings::local`] for a prior that holds results of the device being tuned
/// ([`PriorParams::for_device`]; ungated).
pub const SAME_DEVICE_LOCAL: usize = 8;

impl PriorParams {
    /// The default settings for `sources` on the device named `device`. The neighbours of
    /// the best configuration so far follow the prior's own: with other devices' results
    /// ([`PriorParams::default`]) up to [`DEFAULT_LOCAL`] misses in a row, and only when one of
    /// the prior's last [`DEFAULT_GATE`] results improved the best (a prior whose best came
    /// early and was never beaten again may sit in another basin than the optimum's:
    /// convolution_A100 in `docs/strategies.md`); with a source of that very device (its
    /// results at other problem sizes: wisdom, logs) up to [`SAME_DEVICE_LOCAL`], always, in
    /// the seed's order (not [`TrustSettings::guided`]), the case measured on the H100 (online
    /// tuning at sizes nobody tuned: a one-value change, `KSPLIT=4` for 8, was the best at one
    /// GEMM size).
    pub fn for_device(sources: &[PriorSource], device: &str) -> PriorParams {
        let mut p = PriorParams::default();
        let same = !device.is_empty() && sources.iter().any(|s| s.device == device);
        if let (true, PriorShare::Trust(t)) = (same, &mut p.share) {
            t.local = SAME_DEVICE_LOCAL;
            t.gate = 0;
            // The order measured on the H100 (the seed's; a wisdom record ranks only its own
            // configuration and alternates).
            t.guided = false;
        }
        p
    }

    /// Reads `take=N:rank=robin|mean:share=blind|design|extra|lateN|trustN|forgetN|mixN:feature=0|1:agree=K:agreetake=0|1:stop=N:local=N:localmix=N:gate=N:guided=0|1`
    /// (for experiments; missing keys keep the defaults, but `share=` sets the share whole:
    /// `share=mix1` is the default without the neighbours, `local` and `gate` 0, as the
    /// earlier rounds' commands measured it). `trustN`: [`PriorShare::Trust`] with patience
    /// N; `forgetN` also sets `forget`; `mixN` sets `forget` and `mix`. `gate` needs `local`.
    pub fn parse(text: &str) -> Result<PriorParams, String> {
        let mut p = PriorParams::default();
        let mut stop = None;
        let mut local = None;
        let mut gate = None;
        let mut guided = None;
        // The keys given so far (`local` and `localmix` set one thing).
        let mut given: Vec<&str> = Vec::new();
        fn setting(k: &str) -> &str {
            if k == "localmix" {
                "local"
            } else {
                k
            }
        }
        for kv in text.split([':', ',']).filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            if given.contains(&k) {
                return Err(format!("`{k}` is given twice"));
            }
            if given.iter().any(|g| setting(g) == setting(k)) {
                return Err("`local` and `localmix` set one thing: give one of them".into());
            }
            given.push(k);
            let whole = || -> Result<usize, String> {
                v.parse().map_err(|_| format!("`{kv}`: not a whole number"))
            };
            let flag = || -> Result<bool, String> {
                match v {
                    "1" | "true" => Ok(true),
                    "0" | "false" => Ok(false),
                    _ => Err(format!("`{kv}`: 0 or 1")),
                }
            };
            match k {
                "take" => p.take = whole()?,
                "rank" => {
                    p.rank = match v {
                        "robin" => PriorRank::RoundRobin,
                        "mean" => PriorRank::MeanRank,
                        _ => return Err(format!("`{kv}`: rank is `robin` or `mean`")),
                    }
                }
                "feature" => p.feature = flag()?,
                "agreetake" => p.agree_take = flag()?,
                "agree" => p.agree = whole()?,
                "stop" => stop = Some(whole()?),
                "gate" => gate = Some(whole()?),
                "guided" => guided = Some(flag()?),
                "local" => local = Some((whole()?, false)),
                "localmix" => local = Some((whole()?, true)),
                "share" => {
                    p.share = match v {
                        "blind" => PriorShare::Blind,
                        "design" => PriorShare::Design,
                        "extra" => PriorShare::Extra,
                        _ => match (
                            v.strip_prefix("late").map(str::parse),
                            v.strip_prefix("trust")
                                .or_else(|| v.strip_prefix("forget"))
                                .or_else(|| v.strip_prefix("mix"))
                                .map(str::parse),
                        ) {
                            (Some(Ok(n)), _) => PriorShare::Late(n),
                            (_, Some(Ok(patience))) => PriorShare::Trust(TrustSettings {
                                patience,
                                forget: !v.starts_with("trust"),
                                mix: v.starts_with("mix"),
                                stop: 0,
                                local: 0,
                                local_mix: false,
                                gate: 0,
                                guided: false,
                            }),
                            _ => {
                                return Err(format!(
                                    "`{kv}`: share is `blind`, `design`, `extra`, `lateN`, `trustN`, `forgetN` or `mixN`"
                                ))
                            }
                        },
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown prior setting `{k}` (take, rank, share, feature, agree, agreetake, stop, local, localmix, gate, guided)"
                    ))
                }
            }
        }
        if stop.is_some() || local.is_some() || gate.is_some() || guided.is_some() {
            let PriorShare::Trust(t) = &mut p.share else {
                let key = if stop.is_some() {
                    "stop"
                } else if local.is_some() {
                    "local"
                } else if gate.is_some() {
                    "gate"
                } else {
                    "guided"
                };
                return Err(format!(
                    "`{key}` applies to share=trustN, forgetN or mixN only"
                ));
            };
            if let Some(n) = stop {
                t.stop = n;
            }
            if let Some((n, mix)) = local {
                t.local = n;
                t.local_mix = mix;
            }
            if let Some(n) = gate {
                t.gate = n;
            }
            if let Some(g) = guided {
                t.guided = g;
            }
            // Given without neighbours, `gate` and `guided` are errors; the defaults are
            // dropped with them (`local=0` alone turns the climb off).
            if t.local == 0 {
                if gate.is_some_and(|g| g > 0) {
                    return Err("`gate` applies to the neighbours: give `local` above 0 too".into());
                }
                if guided == Some(true) {
                    return Err(
                        "`guided` applies to the neighbours: give `local` above 0 too".into(),
                    );
                }
                t.gate = 0;
                t.guided = false;
            }
        }
        Ok(p)
    }
}

/// What seeds one run: the prior's points in a space, best first, and what the strategy is
/// told of their results. The default seeds nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Seeding {
    /// Valid points of the space, distinct, best first.
    pub points: Vec<Point>,
    /// See [`PriorParams::share`].
    pub share: PriorShare,
    /// The prior's scores for the strategy's model ([`PriorParams::feature`]).
    pub scores: Option<PriorScores>,
    /// The prior's scores that order the neighbours ([`TrustSettings::guided`]).
    pub climb: Option<PriorScores>,
}

impl Default for Seeding {
    fn default() -> Seeding {
        Seeding {
            points: Vec::new(),
            share: PriorShare::Blind,
            scores: None,
            climb: None,
        }
    }
}

/// A prior mapped into a space.
#[derive(Clone, Debug, PartialEq)]
pub struct MappedPrior {
    /// The configurations to evaluate first, best first (valid points of the space, distinct).
    pub points: Vec<Point>,
    /// What was ignored or filled in, in words, at most a few per source.
    pub notes: Vec<String>,
    /// Results of the prior that map into the space (successful or failed).
    pub matched: usize,
    /// Results of the prior in all.
    pub total: usize,
    /// See [`PriorParams::share`].
    pub share: PriorShare,
    /// The prior's score of each configuration it holds (0 best, 1 worst: the mean over
    /// sources of its rank fraction, failures 1), when [`PriorParams::feature`].
    pub scores: Option<PriorScores>,
    /// How much the sources agree ([`agreement::agreement`]; `None`: unknown).
    pub agreement: Option<f64>,
    /// The same scores as `scores`, when [`TrustSettings::guided`] orders the neighbours.
    pub climb: Option<PriorScores>,
}

impl MappedPrior {
    /// What seeds a run.
    pub fn seeding(&self) -> Seeding {
        Seeding {
            points: self.points.clone(),
            share: self.share,
            scores: self.scores.clone(),
            climb: self.climb.clone(),
        }
    }
}

/// Maps the sources' results into `space` and ranks them (see the module's documentation).
pub fn map(sources: &[PriorSource], space: &TuningSpace, params: PriorParams) -> MappedPrior {
    let mut out = MappedPrior {
        points: Vec::new(),
        notes: Vec::new(),
        matched: 0,
        total: 0,
        share: params.share,
        scores: None,
        agreement: None,
        climb: None,
    };
    let mut failed: Vec<Point> = Vec::new();
    // Per source: its successful points, best first.
    let mut ranked: Vec<Vec<Point>> = Vec::new();
    // Per source: its successful results.
    let mut values: Vec<HashMap<Point, f64>> = Vec::new();
    let defaults = space.default_point();
    for source in sources {
        let mut best: HashMap<Point, f64> = HashMap::new();
        let mut notes = SourceNotes::default();
        for (config, value) in &source.results {
            out.total += 1;
            let Some(point) = map_config(space, &defaults, config, &mut notes) else {
                continue;
            };
            out.matched += 1;
            match value {
                Some(v) => {
                    let e = best.entry(point).or_insert(*v);
                    *e = e.min(*v);
                }
                None => failed.push(point),
            }
        }
        out.notes.extend(notes.words(&source.label));
        let mut list: Vec<(Point, f64)> = best.iter().map(|(p, v)| (p.clone(), *v)).collect();
        list.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        ranked.push(list.into_iter().map(|(p, _)| p).collect());
        values.push(best);
    }
    out.agreement = agreement::agreement(&values);
    let mut take = params.take;
    if let Some(a) = out.agreement {
        if params.agree_take {
            let sources = ranked.iter().filter(|l| !l.is_empty()).count();
            take = ((take as f64 * a.clamp(0.0, 1.0)).round() as usize).max(sources);
        }
        if let PriorShare::Trust(mut t) = params.share {
            t.patience += (params.agree as f64 * (2.0 * a - 1.0).clamp(0.0, 1.0)).round() as usize;
            out.share = PriorShare::Trust(t);
        }
    }
    let guided = matches!(out.share, PriorShare::Trust(t) if t.guided);
    if params.feature || guided {
        let all: PriorScores = std::sync::Arc::new(scores(&ranked, &failed));
        out.scores = params.feature.then(|| all.clone());
        out.climb = guided.then_some(all);
    }
    out.points = match params.rank {
        PriorRank::RoundRobin => round_robin(&ranked, take),
        PriorRank::MeanRank => mean_rank(&ranked, take),
    };
    out
}

fn round_robin(ranked: &[Vec<Point>], take: usize) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    let longest = ranked.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..longest {
        for list in ranked {
            if out.len() >= take {
                return out;
            }
            if let Some(p) = list.get(k) {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
    }
    out
}

/// The mean over sources of each point's rank fraction (0 best, 1 worst); failed points
/// that no source measured successfully score 1.
fn scores(ranked: &[Vec<Point>], failed: &[Point]) -> HashMap<Point, f64> {
    let mut sum: HashMap<&Point, (f64, usize)> = HashMap::new();
    for list in ranked {
        let n = list.len().max(2) as f64 - 1.0;
        for (k, p) in list.iter().enumerate() {
            let e = sum.entry(p).or_insert((0.0, 0));
            e.0 += k as f64 / n;
            e.1 += 1;
        }
    }
    let mut out: HashMap<Point, f64> = sum
        .into_iter()
        .map(|(p, (s, c))| (p.clone(), s / c as f64))
        .collect();
    for p in failed {
        out.entry(p.clone()).or_insert(1.0);
    }
    out
}

fn mean_rank(ranked: &[Vec<Point>], take: usize) -> Vec<Point> {
    let mut all: Vec<(f64, Point)> = scores(ranked, &[])
        .into_iter()
        .map(|(p, s)| (s, p))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    all.into_iter().take(take).map(|(_, p)| p).collect()
}

/// What one source's mapping ignored or filled in.
#[derive(Default)]
struct SourceNotes {
    /// Prior parameters this space lacks.
    extra: Vec<String>,
    /// Space parameters the prior lacks (their default used).
    missing: Vec<String>,
    /// Configurations with a value the space does not declare, and the first such value of
    /// up to three parameters.
    outside: (usize, Vec<String>),
    /// Configurations that break the space's restrictions.
    invalid: usize,
    /// Configurations that name no parameter of this space.
    disjoint: usize,
}

impl SourceNotes {
    fn words(&self, label: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !self.extra.is_empty() {
            out.push(format!(
                "{label}: parameter(s) {} not in this space, ignored",
                self.extra.join(", ")
            ));
        }
        if !self.missing.is_empty() {
            out.push(format!(
                "{label}: parameter(s) {} missing, this space's default used",
                self.missing.join(", ")
            ));
        }
        if self.outside.0 > 0 {
            out.push(format!(
                "{label}: {} configuration(s) with values outside this space ignored (e.g. {})",
                self.outside.0,
                self.outside.1.join("; ")
            ));
        }
        if self.invalid > 0 {
            out.push(format!(
                "{label}: {} configuration(s) breaking this space's restrictions ignored",
                self.invalid
            ));
        }
        if self.disjoint > 0 {
            out.push(format!(
                "{label}: {} configuration(s) naming no parameter of this space ignored (another \
                 kernel's results?)",
                self.disjoint
            ));
        }
        out
    }
}

/// The point of `config` in `space` by parameter names, or `None` (noted) when a value is not
/// declared there (numbers compared by value, bools as 0 and 1), the configuration breaks a restriction, or it
/// names none of the space's parameters.
fn map_config(
    space: &TuningSpace,
    defaults: &[u32],
    config: &Config,
    notes: &mut SourceNotes,
) -> Option<Point> {
    for (name, _) in config.iter() {
        let quoted = format!("`{name}`");
        if space.param_index(name).is_none() && !notes.extra.contains(&quoted) {
            notes.extra.push(quoted);
        }
    }
    // A configuration of none of this space's parameters would be its default in full: it
    // says nothing about this space.
    if !space.params().is_empty()
        && !config
            .iter()
            .any(|(name, _)| space.param_index(name).is_some())
    {
        notes.disjoint += 1;
        return None;
    }
    let mut point = Vec::with_capacity(space.params().len());
    for (k, p) in space.params().iter().enumerate() {
        let index = match config.get(&p.name) {
            Some(v) => match space.value_index(k, v) {
                Some(i) => i as u32,
                None => {
                    // One example per parameter (up to three): the parameter that rules out
                    // most configurations is not always the first one met.
                    let example = format!("`{}` = {v}", p.name);
                    let of_param = format!("`{}` =", p.name);
                    if notes.outside.1.len() < 3
                        && !notes.outside.1.iter().any(|e| e.starts_with(&of_param))
                    {
                        notes.outside.1.push(example);
                    }
                    notes.outside.0 += 1;
                    return None;
                }
            },
            None => {
                let name = format!("`{}`", p.name);
                if !notes.missing.contains(&name) {
                    notes.missing.push(name);
                }
                defaults[k]
            }
        };
        point.push(index);
    }
    if !space.contains(&point) {
        notes.invalid += 1;
        return None;
    }
    Some(point)
}
