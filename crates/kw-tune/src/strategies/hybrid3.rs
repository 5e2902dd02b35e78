//! `hybrid3`, the default strategy: `hybrid2` ([`super::hybrid2`]) with a broader endgame,
//! chosen on 400 held-out seeds (see `docs/strategies.md`):
//! - the endgame takes the last 30% of a bounded budget (20% before), and pools the
//!   configurations one or two Hamming steps from the *two* best configurations, not only the
//!   best: a runner-up in another basin often sits next to the optimum;
//! - each endgame proposal ranks that pool by one tree of the forest drawn at random (Thompson
//!   sampling) instead of the forest's mean: where the mean ranks the same few configurations
//!   first again and again, the trees' disagreement spreads the picks over the plausible ones;
//! - global proposals score 800 random unvisited configurations (200 before), so a good
//!   region that the model favours is found even when it is a small part of the space.
//!
//! Same constants for every space: [`SurrogateParams::hybrid3`].

use super::surrogate::{Surrogate, SurrogateParams};

/// `hybrid3`, seeded with `seed`.
pub fn new(seed: u64) -> Surrogate {
    Surrogate::with_params("hybrid3", seed, SurrogateParams::hybrid3())
}
