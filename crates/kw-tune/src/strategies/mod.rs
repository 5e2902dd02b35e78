//! The search strategies and their registry.
//!
//! Every strategy works natively on the space's index and neighbour operations: it never
//! proposes an invalid configuration and needs no penalty values. Failed configurations are
//! results like any other (strategies treat them as the worst and avoid their surroundings
//! where they model them). All are deterministic given their seed.

pub mod annealing;
pub mod common;
pub mod exhaustive;
pub mod genetic;
pub mod hybrid2;
pub mod hybrid3;
pub mod hybrid4;
pub mod ils;
pub mod pack;
pub mod pso;
pub mod random;
pub mod seeded;
pub mod surrogate;
pub mod tabu_greywolf;
pub mod trees;
mod trust;

use crate::error::TuneError;
use crate::strategy::Strategy;

/// The strategy used when none is named (chosen by measurement: see `docs/strategies.md`).
pub const DEFAULT: &str = "hybrid6";

/// A strategy constructor: seed -> strategy.
pub type Constructor = fn(u64) -> Box<dyn Strategy>;

/// The registry: name, one-line description, constructor.
pub const REGISTRY: &[(&str, &str, Constructor)] = &[
    (
        "random",
        "uniform random sampling without replacement",
        |s| Box::new(random::RandomSearch::new(s)),
    ),
    ("exhaustive", "every configuration in index order", |s| {
        Box::new(exhaustive::Exhaustive::new(s))
    }),
    (
        "genetic",
        "genetic algorithm: tournament selection, uniform crossover, mutation, repair",
        |s| Box::new(genetic::Genetic::new(s)),
    ),
    (
        "annealing",
        "simulated annealing over Hamming neighbourhoods with restarts",
        |s| Box::new(annealing::Annealing::new(s)),
    ),
    (
        "ils",
        "iterated local search: first-improvement descent and perturbation",
        |s| Box::new(ils::IteratedLocalSearch::new(s)),
    ),
    ("pso", "particle swarm optimisation on value indices", |s| {
        Box::new(pso::ParticleSwarm::new(s))
    }),
    (
        "surrogate",
        "model-based: extra-trees surrogate with expected improvement",
        |s| Box::new(surrogate::Surrogate::new(s)),
    ),
    (
        "hybrid",
        "surrogate plus model-guided descent and endgame",
        |s| Box::new(surrogate::Surrogate::hybrid(s)),
    ),
    (
        "hybrid2",
        "hybrid with log2 value features and a two-step endgame",
        |s| Box::new(hybrid2::new(s)),
    ),
    (
        "hybrid3",
        "hybrid2 with a longer, Thompson-sampled endgame near the two best",
        |s| Box::new(hybrid3::new(s)),
    ),
    (
        "tabu_greywolf",
        "Kernel Tuner's adaptive_tabu_greywolf: pack of 8 led by its 3 best, shaking, tabu list, annealing, partial restarts",
        |s| Box::new(tabu_greywolf::TabuGreyWolf::new(s)),
    ),
    (
        "hybrid4",
        "hybrid3's model (no endgame) for 20 evaluations, then a tabu_greywolf pack seeded with the best, alternating with the model",
        |s| Box::new(hybrid4::Hybrid4::new(s)),
    ),
    (
        "hybrid5",
        "hybrid4 with every 5th proposal after the first 20 a random configuration",
        |s| Box::new(hybrid4::Hybrid4::hybrid5(s)),
    ),
    (
        "hybrid6",
        "hybrid5 without the pack: hybrid3's model (no endgame), every 5th proposal after the first 20 random (the default)",
        |s| Box::new(hybrid4::Hybrid4::hybrid6(s)),
    ),
];

/// The registered names, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _, _)| *n).collect()
}

/// What `--strategy all` runs: every registered strategy.
pub fn all() -> Vec<&'static str> {
    names()
}

/// A new strategy by name, seeded with `seed`. `hybrid4`, `hybrid5` and `hybrid6` also take
/// settings in their name, for experiments: `hybrid5:key=value:key=value` (see
/// [`hybrid4::Hybrid4Params::set`]).
pub fn create(name: &str, seed: u64) -> Result<Box<dyn Strategy>, TuneError> {
    let with_settings = [
        (
            "hybrid4:",
            hybrid4::Hybrid4Params::hybrid4 as fn() -> hybrid4::Hybrid4Params,
        ),
        ("hybrid5:", hybrid4::Hybrid4Params::hybrid5),
        ("hybrid6:", hybrid4::Hybrid4Params::hybrid6),
    ]
    .into_iter()
    .find_map(|(prefix, base)| name.strip_prefix(prefix).map(|o| (o, base())));
    if let Some((options, mut params)) = with_settings {
        for kv in options.split(':').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            params
                .set(k, v)
                .map_err(|message| TuneError::StrategyOption {
                    name: name.to_string(),
                    message,
                })?;
        }
        return Ok(Box::new(hybrid4::Hybrid4::with_params(
            name.to_string(),
            seed,
            params,
        )));
    }
    REGISTRY
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, make)| make(seed))
        .ok_or_else(|| TuneError::UnknownStrategy {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// [`create`], seeded with a prior's configurations (see [`seeded`]): they are proposed
/// first. Without prior points, the strategy itself.
pub fn create_seeded(
    name: &str,
    seed: u64,
    prior: &crate::prior::Seeding,
) -> Result<Box<dyn Strategy>, TuneError> {
    let mut inner = create(name, seed)?;
    if let Some(scores) = &prior.scores {
        inner.set_prior_scores(scores.clone());
    }
    if prior.points.is_empty() {
        return Ok(inner);
    }
    let blind = match prior.share {
        crate::prior::PriorShare::Trust { .. } => Some(create(name, seed)?),
        _ => None,
    };
    Ok(Box::new(
        seeded::Seeded::with_blind(inner, blind, prior.points.clone(), prior.share)
            .seeded(seed)
            .with_climb_order(prior.climb.clone()),
    ))
}
