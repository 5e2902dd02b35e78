//! # kw-core
//!
//! The GPU-free heart of kernel-wisdom: [`Value`](value::Value)s, the
//! [`Expr`](expr::Expr) language (build, parse, print, evaluate, JSON),
//! [`TuningSpace`](space::TuningSpace)s built the ATF way, [`Config`](config::Config)urations,
//! readers for Kernel Tuner's files ([`kernel_tuner`]), kernel definitions
//! ([`KernelDef`](kernel_def::KernelDef): types in [`kernel_def`], evaluation in
//! [`kernel_def::eval`], checks in [`kernel_def::check`], the compile request in
//! [`compile_spec`]), device
//! descriptions ([`DeviceInfo`](device::DeviceInfo)) and the object-safe backend traits
//! ([`backend`]) with typed buffers ([`buffer::DeviceBuffer`]).
//!
//! It also holds what several crates above share: the metadata of capture files
//! (`capture_meta`), wisdom files and the five-step selection (`wisdom`), the on-disk compile
//! cache both backends compile through (`compile_cache`), every message the libraries print
//! (`diag`, `KW_LOG`), reading and writing files without trusting the file system (`files`,
//! `KW_FILE_MODE`), a device that launches nothing, for benches and tests (`null_device`), and
//! a small mutation fuzzer used by tests (`mutation_fuzzer`).
//!
//! Every item has one public path, its module's (`kw_core::config::Config`).
//!
//! ## Layer
//!
//! Layer 0 of the workspace (`docs/architecture.md`): kw-core depends on no other workspace
//! crate, and every other crate depends on it. It holds no backend code: devices are reached
//! through the traits of `backend`, which `kw-opencl` and `kw-cuda` implement.
//!
//! ## Where to start reading
//!
//! `value.rs` and `expr.rs` (the language), `space/` (tuning spaces), `kernel_def/` with
//! `kernel_def/eval.rs` and `compile_spec.rs` (definitions and the one compile path), `backend/` (the
//! traits backends implement), then `wisdom/` (files and selection). Which module imports which
//! is summed up in `docs/architecture.md` ("Is kw-core one crate or several?": one crate, and
//! why).

pub mod backend;
pub mod buffer;
pub mod capture_meta;
pub mod child_env;
pub mod compile_cache;
pub mod compile_spec;
pub mod config;
pub mod device;
pub mod diag;
pub mod did_you_mean;
pub mod duration;
pub mod eval;
pub mod expr;
pub mod files;
pub mod host;
pub mod includes;
pub mod json_keys;
pub mod kernel_def;
pub mod kernel_tuner;
pub mod mutation_fuzzer;
pub mod null_device;
pub mod objective;
pub mod parse;
pub mod rng;
pub mod scalar;
pub mod space;
pub mod tolerance;
pub mod user_dirs;
pub mod value;
pub mod wisdom;
