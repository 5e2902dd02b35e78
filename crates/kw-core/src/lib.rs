//! # kw-core
//!
//! The GPU-free heart of kernel-wisdom: [`Value`](value::Value)s, the
//! [`Expr`](expr::Expr) language (build, parse, print, evaluate, JSON),
//! [`TuningSpace`](space::TuningSpace)s built the ATF way, [`Config`](config::Config)urations,
//! readers for Kernel Tuner's files ([`kernel_tuner`]), kernel definitions
//! ([`KernelDef`](kernel_def::KernelDef): types in [`kernel_def`], evaluation in
//! [`def_eval`], checks in [`def_check`], the compile request in [`compile_spec`]), device
//! descriptions ([`DeviceInfo`](device::DeviceInfo)) and the object-safe backend traits
//! ([`backend`]) with typed buffers ([`buffer::DeviceBuffer`]).
//!
//! Every item has one public path, its module's (`kw_core::config::Config`).

pub mod backend;
pub mod buffer;
pub mod capture_meta;
pub mod compile_cache;
pub mod compile_spec;
pub mod config;
pub mod def_check;
pub mod def_eval;
pub mod def_launch;
pub mod device;
pub mod diag;
pub mod eval;
pub mod expr;
pub mod fuzz;
pub mod host;
pub mod kernel_def;
pub mod kernel_tuner;
pub mod null_device;
pub mod objective;
pub mod parse;
pub mod rng;
pub mod scalar;
pub mod space;
pub mod suggest;
pub mod tolerance;
pub mod value;
pub mod wisdom;
