//! # kw-core
//!
//! The GPU-free heart of kernel-wisdom: [`Value`]s, the [`Expr`] language (build, parse,
//! print, evaluate, JSON), [`TuningSpace`]s built the ATF way, [`Config`]urations, and readers
//! for Kernel Tuner's files ([`kernel_tuner`]).

pub mod config;
pub mod eval;
pub mod expr;
pub mod kernel_tuner;
pub mod parse;
pub mod rng;
pub mod space;
pub mod suggest;
pub mod value;
pub mod wisdom;

pub use config::Config;
pub use eval::{EvalError, Scope};
pub use expr::Expr;
pub use parse::ParseError;
pub use space::{Parameter, Point, TuningSpace};
pub use value::Value;
