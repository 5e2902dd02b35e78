//! # kw-replay
//!
//! Replays captured kernel launches on a tuning machine: [`ReplaySession`] loads a capture
//! onto any device of its backend (inputs uploaded once, pristine copies of every written
//! buffer kept on the device); [`ReplayEvaluator`] is the [`kw_tune::Evaluator`] that
//! measures configurations (compiled ahead on a [`CompilePool`], buffers restored before
//! every run, warm-ups, timed launches with device events, median objective, every sample
//! kept) and verifies each against the captured output ([`verify`]; on the device with
//! [`device_verify`], the reference uploaded once). Timed runs and their restores are enqueued
//! as batches with one host wait ([`kw_core::backend::Device::launch_timed_runs`]); the evaluator's
//! [`ReplayStats`] say where the time went and how many compiles the compile cache saved.
//!
//! Each output is verified with its buffer's tolerance from the definition, scaled by the
//! output's magnitude ([`kw_core::tolerance`]; NaN equals NaN unless asked otherwise). Every
//! buffer has a guard region past its end, checked after each configuration; after a failed
//! evaluation every buffer is restored ([`guard`]). The space searched is the one valid at the
//! capture's problem size and arguments ([`launch_space`]).
//!
//! [`tuned_record`] makes the wisdom record of a tuning run's best configuration.
//!
//! ## Layer
//!
//! Layer 2 (`docs/architecture.md`): depends on `kw-core`, `kw-capture` and `kw-tune` only: no
//! backend crate and no runtime (`kernel-wisdom` is a dev-dependency, for tests). The device is
//! a `kw_core::backend::Device` its caller opened (`kw-cli`, through `kernel-wisdom`). It
//! compiles through `KernelDef::compile_spec`, as the runtime does
//! (`tests/one_compile_path.rs`). No `unsafe` (`#![forbid(unsafe_code)]`).
//!
//! ## Where to start reading
//!
//! `session/` (loading a capture, restore, timed runs), `evaluator.rs` (one configuration
//! measured and verified), `compile.rs` (the compile pool), `ahead.rs` (how many configurations
//! the tuning loop keeps compiling ahead), `verify.rs` and `device_verify.rs`
//! with the comparison kernels in `kernels/compare.cl` and `kernels/compare.cu` (in this crate).

#![forbid(unsafe_code)]

pub mod ahead;
pub mod compile;
pub mod device_verify;
pub mod error;
pub mod evaluator;
pub mod guard;
pub mod launch_space;
pub mod measure;
pub mod session;
pub mod verify;
pub mod wisdom;

pub use ahead::Ahead;
pub use compile::CompilePool;
pub use device_verify::DeviceComparer;
pub use error::ReplayError;
pub use evaluator::{Measurement, ReplayEvaluator, ReplayStats};
pub use measure::{median, spread, MeasureOptions, VerifyMode};
pub use session::{capture_checksum, reference_gap, ReplaySession, VerifyWhere};
pub use verify::{Mismatch, Summary, Tolerance, ToleranceOverride};
pub use wisdom::{tuned_record, verified_tolerances, TuningRun};
