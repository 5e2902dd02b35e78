//! # kw-core
//!
//! The GPU-free heart of kernel-wisdom: [`Value`]s, the [`Expr`] language (build, parse,
//! print, evaluate, JSON), [`TuningSpace`]s built the ATF way, [`Config`]urations, readers
//! for Kernel Tuner's files ([`kernel_tuner`]), kernel definitions ([`KernelDef`]: types in
//! [`kernel_def`], evaluation in [`def_eval`], checks in [`def_check`]), device descriptions
//! ([`DeviceInfo`]) and the object-safe backend traits ([`backend`]) with typed buffers
//! ([`buffer::DeviceBuffer`]).

pub mod backend;
pub mod buffer;
pub mod capture_meta;
pub mod compile_cache;
pub mod config;
pub mod def_check;
pub mod def_eval;
pub mod device;
pub mod eval;
pub mod expr;
pub mod fuzz;
pub mod kernel_def;
pub mod kernel_tuner;
pub mod parse;
pub mod rng;
pub mod scalar;
pub mod space;
pub mod suggest;
pub mod value;
pub mod wisdom;

pub use backend::{
    Backend, BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory,
    KernelArg, Mem, Queue, RawHandle, RawMem, RawQueue,
};
pub use buffer::DeviceBuffer;
pub use capture_meta::{CaptureMetadata, CapturedArg};
pub use config::Config;
pub use def_check::DefProblem;
pub use def_eval::{DefError, Geometry};
pub use device::{BackendKind, DeviceInfo};
pub use eval::{EvalError, Scope};
pub use expr::Expr;
pub use kernel_def::{Access, ArgDef, ArgKind, Grid, KernelDef, KernelSource};
pub use parse::ParseError;
pub use scalar::{Scalar, ScalarType, ScalarValue};
pub use space::{Parameter, Point, TuningSpace};
pub use value::Value;
