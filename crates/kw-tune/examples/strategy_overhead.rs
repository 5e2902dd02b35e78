//! Bench binary: the strategies' own time per proposal (ask + tell, the evaluation itself is a
//! table look-up) on a synthetic space of about 20,000 valid configurations, against `random`
//! measured in the same run.
//!
//! ```sh
//! cargo run --release -p kw-tune --example strategy_overhead -- [BUDGET] [SEEDS] [STRATEGY,...]
//! ```

use kw_core::space::Parameter;
use kw_core::{expr::Expr, space::Point, space::TuningSpace};
use kw_tune::{EvalFailure, EvalResult, Stop, Tuner};
use std::time::Instant;

fn space() -> TuningSpace {
    TuningSpace::new(
        vec![
            Parameter::new("block_size_x", (1..=32).map(|i| 16 * i)),
            Parameter::new("block_size_y", [1, 2, 4, 8, 16, 32]),
            Parameter::new("tile_x", [1, 2, 3, 4, 6, 8]),
            Parameter::new("tile_y", [1, 2, 3, 4, 6, 8]),
            Parameter::new("unroll", [0, 1, 2, 4]),
            Parameter::new("shared", [0, 1]),
        ],
        vec![Expr::parse("32 <= block_size_x * block_size_y <= 1024").expect("restriction")],
    )
    .expect("space")
}

/// A deterministic rugged objective with a few failures.
fn objective(space: &TuningSpace, p: &Point) -> EvalResult {
    let c = space.config(p);
    let g = |n: &str| c.get(n).and_then(|v| v.as_f64()).unwrap_or(1.0);
    let (bx, by, tx, ty, u, s) = (
        g("block_size_x"),
        g("block_size_y"),
        g("tile_x"),
        g("tile_y"),
        g("unroll"),
        g("shared"),
    );
    if tx * ty > 32.0 && u == 4.0 {
        return Err(EvalFailure::new("too many registers"));
    }
    let threads = bx * by;
    let occupancy = ((threads / 256.0).log2()).powi(2);
    let work = (tx * ty).log2() - 2.5;
    let align = if (bx as u64).is_multiple_of(32) {
        0.0
    } else {
        0.4
    };
    Ok(
        1.0 + occupancy + work * work * 0.3 + align + (u - 2.0).abs() * 0.1 + s * 0.2
            - s * work * 0.1,
    )
}

/// CPU seconds of this process so far (user + system, from `/proc/self/stat`; Linux only),
/// so that other load on the machine does not count; `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let budget: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(800);
    let seeds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
    let names: Vec<String> = args
        .get(3)
        .map(|a| a.split(',').map(str::to_string).collect())
        .unwrap_or_else(|| {
            [
                "random",
                "tabu_greywolf",
                "hybrid3",
                "hybrid4",
                "hybrid5",
                "hybrid6",
            ]
            .map(str::to_string)
            .to_vec()
        });
    let space = space();
    let table: std::collections::HashMap<Point, EvalResult> = space
        .iter()
        .map(|p| (p.clone(), objective(&space, &p)))
        .collect();
    println!(
        "space: {} valid configurations; budget {budget}, {seeds} seeds; CPU ms per proposal (ask + tell; wall ms in brackets)",
        space.len()
    );
    let mut baseline = None;
    for name in &names {
        let started = Instant::now();
        let cpu0 = cpu_seconds();
        let mut proposals = 0u64;
        for seed in 0..seeds {
            let mut strategy = kw_tune::strategies::create(name, seed).expect("strategy");
            let mut ev = |p: &Point| table[p].clone();
            let report = Tuner::new(&space, Stop::Evaluations(budget))
                .run(&mut *strategy, &mut ev)
                .expect("run");
            proposals += report.progress.evaluations;
        }
        let n = proposals.max(1) as f64;
        let wall = started.elapsed().as_secs_f64() * 1e3 / n;
        let ms = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) => (b - a) * 1e3 / n,
            _ => wall,
        };
        let base = *baseline.get_or_insert(ms.max(1e-6));
        println!(
            "{name:<16} {ms:>8.3} ms/proposal ({wall:.3})  {:>9.1}x the first",
            ms / base
        );
    }
}
