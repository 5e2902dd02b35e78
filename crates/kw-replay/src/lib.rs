//! # kw-replay
//!
//! Replays captured kernel launches on a tuning machine: [`ReplaySession`] loads a capture
//! onto any device of its backend (inputs uploaded once, pristine copies of every written
//! buffer kept on the device); [`ReplayEvaluator`] is the [`kw_tune::Evaluator`] that
//! measures configurations (compiled ahead on a [`CompilePool`], buffers restored before
//! every run, warm-ups, timed launches with device events, median objective, every sample
//! kept) and verifies each against the captured output ([`verify`]).

#![forbid(unsafe_code)]

pub mod compile;
pub mod error;
pub mod evaluator;
pub mod measure;
pub mod session;
pub mod verify;
pub mod wisdom;

pub use compile::CompilePool;
pub use error::ReplayError;
pub use evaluator::{Measurement, ReplayEvaluator, ReplayStats};
pub use measure::{median, spread, MeasureOptions, VerifyMode};
pub use session::{capture_checksum, reference_gap, ReplaySession};
pub use verify::{Mismatch, Tolerance};
pub use wisdom::{tuned_record, TuningRun};
