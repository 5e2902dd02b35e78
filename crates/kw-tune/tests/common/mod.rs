//! Shared helpers of the integration tests.
#![allow(dead_code)]

use kw_core::space::Parameter;
use kw_core::{expr::Expr, space::TuningSpace};
use kw_tune::simulate::Simulation;
use kw_tune::{EvalFailure, EvalResult};
use std::path::PathBuf;

/// The shared measured spaces (`../shared` relative to the workspace root), if present.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/tuning-spaces"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIPPED: ../shared not found");
        None
    }
}

/// A measured space: `convolution`, `dedispersion` or `pnpoly`.
pub fn simulation(dir: &std::path::Path, which: &str) -> Simulation {
    let (cache, t1) = match which {
        "convolution" => ("convolution_A100.json.gz", Some("convolution_T1.json")),
        "dedispersion" => ("dedispersion_A4000.json.gz", Some("dedispersion_T1.json")),
        _ => ("pnpoly_RTX_3090.json.gz", None),
    };
    let t1 = t1.map(|f| dir.join(f));
    Simulation::load(&dir.join(cache), t1.as_deref()).expect("load the simulation")
}

/// A small restricted space (no files needed): 3 parameters, a product restriction.
pub fn small_space() -> TuningSpace {
    TuningSpace::new(
        vec![
            Parameter::new("bx", [16, 32, 64, 128, 256]),
            Parameter::new("by", [1, 2, 4, 8]),
            Parameter::new("unroll", [0, 1, 2, 4]),
        ],
        vec![Expr::parse("32 <= bx * by <= 512").expect("parse")],
    )
    .expect("space")
}

/// A deterministic objective on the small space, failing where `unroll == 4 and by == 8`.
pub fn small_objective(space: &TuningSpace, point: &[u32]) -> EvalResult {
    let c = space.config(point);
    let get = |n: &str| c.get(n).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let (bx, by, u) = (get("bx"), get("by"), get("unroll"));
    if u == 4.0 && by == 8.0 {
        return Err(EvalFailure::new("CompilationFailedConfig"));
    }
    Ok(1.0 + (bx.log2() - 6.0).powi(2) + (by.log2() - 1.0).powi(2) + (u - 2.0).abs() * 0.5)
}
