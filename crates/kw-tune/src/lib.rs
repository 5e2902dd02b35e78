//! # kw-tune
//!
//! The tuning engine of kernel-wisdom, independent of any GPU:
//!
//! - [`Strategy`]: an ask/tell search strategy over a [`TuningSpace`](kw_core::space::TuningSpace)'s
//!   valid configurations (it proposes points, is told each result, failures included);
//!   [`strategies`] holds the implementations and the registry ([`strategies::create`]).
//! - [`Evaluator`]: evaluates one configuration (objective, lower is better) or fails.
//! - [`Stop`]: stop conditions, combinable with [`Stop::Any`] / [`Stop::All`].
//! - [`Tuner`]: the loop. It never evaluates a configuration twice, appends every evaluation
//!   to a [`ResultsLog`] and resumes an interrupted run from it.
//! - [`simulate`]: the simulation evaluator over Kernel Tuner cache files and the benchmark
//!   used to compare strategies on measured spaces.
//! - [`suite`]: scoring strategies on a directory of measured spaces (final fraction and
//!   area under the best-so-far curve per budget).
//! - [`export`]: a results log as a Kernel Tuner cache file.
//! - [`prior`]: results of the same kernel elsewhere (cache files, logs, wisdom) that seed a
//!   search ([`strategies::create_seeded`]).
//!
//! ## Layer
//!
//! Layer 1 (`docs/architecture.md`): depends on `kw-core` only among the workspace crates (its
//! tuning spaces and Kernel Tuner readers), on no backend and on no capture code; no `unsafe`
//! (`#![forbid(unsafe_code)]`). The evaluator that runs configurations on a device is
//! `kw-replay`'s `ReplayEvaluator`; `kw-cli` drives the loop.
//!
//! ## Where to start reading
//!
//! `strategy.rs` and `evaluator.rs` (the two interfaces), `tuner.rs` (the loop), `log.rs` (the
//! results log), then `strategies/mod.rs` (the registry and the default strategy).

#![forbid(unsafe_code)]

pub mod error;
pub mod evaluator;
pub mod export;
mod lock_holder;
pub mod log;
pub mod log_lock;
pub mod prior;
pub mod simulate;
pub mod stop;
pub mod strategies;
pub mod strategy;
pub mod suite;
pub mod tuner;

pub use error::TuneError;
pub use evaluator::{EvalFailure, EvalResult, Evaluator};
pub use log::{LogHeader, LogRecord, ResultsLog};
pub use log_lock::{LockHolder, LogLock};
pub use stop::{Progress, Stop};
pub use strategy::Strategy;
pub use tuner::{Lane, LaneEvent, LaneReport, StopReason, TuneReport, Tuner};
