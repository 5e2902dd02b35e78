//! `hybrid2` (the base of `hybrid3`): `hybrid` ([`super::surrogate`]) with two
//! changes chosen on held-out seeds (see `docs/strategies.md`):
//! - the trees also see log2 of every parameter whose values are three or more positive
//!   numbers (tuning values are often powers of two, so threshold cuts on the log spread
//!   evenly over them), besides the value indices (which alone keep categorical splits);
//! - the endgame ranks the unvisited configurations one *or two* Hamming steps from the best
//!   by predicted value (a lone optimum is often two parameters away from the runner-up, e.g.
//!   `block_size_x` and `block_size_y` changed together at equal thread count).
//!
//! Same constants for every space: [`SurrogateParams::hybrid2`].

use super::surrogate::{Surrogate, SurrogateParams};

/// `hybrid2`, seeded with `seed`.
pub fn new(seed: u64) -> Surrogate {
    Surrogate::with_params("hybrid2", seed, SurrogateParams::hybrid2())
}
