//! `kw simulate CACHE`: score search strategies on one measured space (a Kernel Tuner cache
//! file).

use super::args::{load_priors, prior_points, SimulateArgs};
use anyhow::{bail, Context, Result};
use kw_tune::simulate::{benchmark_seeds, BenchResult, Simulation};
use std::time::Instant;

/// Scores the strategies on one measured space (a Kernel Tuner cache file).
pub fn run(args: SimulateArgs) -> Result<()> {
    let Some(cache) = args.cache.clone() else {
        bail!("give a cache file or --suite DIR");
    };
    // The arguments first: a mistake there is told before a large file is read.
    let budgets = args.budgets()?;
    let seeds = args.seed_range()?;
    let runs = args.runs()?;
    let restrictions = args.restrictions_json.as_deref().or(args.t1.as_deref());
    let sim = Simulation::load(&cache, restrictions)
        .with_context(|| format!("loading the simulation of {}", cache.display()))?;
    for note in &sim.notes {
        eprintln!("kw simulate: note: {}", kw_core::diag::one_line(note, 4000));
    }
    let name = cache.file_name().map_or_else(
        || cache.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let hint = if restrictions.is_none() {
        "; if the kernel's restrictions rule them out, give them with --t1 or --restrictions-json"
    } else {
        ""
    };
    super::args::warn_missing(&cache, &name, &sim, hint);
    let names: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    let threads = args.threads();
    let sources = load_priors(&args.prior)?;
    for note in kw_tune::prior::kernel_notes(&sources, &sim.cache.kernel_name) {
        eprintln!("prior: note: {}", kw_core::diag::one_line(&note, 4000));
    }
    let mut rows: Vec<(BenchResult, f64)> = Vec::new();
    // What a prior setting seeds is said once, not once per strategy.
    let mut told = Vec::new();
    for run in &runs {
        let tell = run.prior.is_some() && !told.contains(&run.prior);
        if tell {
            told.push(run.prior);
        }
        let points = prior_points(
            &sources,
            &sim.space,
            &sim.cache.device_name,
            run.prior,
            tell,
        );
        for &budget in &budgets {
            let started = Instant::now();
            let mut result =
                benchmark_seeds(&sim, &run.name, &points, budget, seeds.clone(), threads)
                    .with_context(|| format!("simulating `{}` with budget {budget}", run.label))?;
            result.strategy = run.label.clone();
            rows.push((result, started.elapsed().as_secs_f64()));
        }
    }
    if args.json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, _)| {
                serde_json::json!({
                    "strategy": r.strategy,
                    "budget": r.budget,
                    "seeds": args.seeds,
                    "mean_fraction": r.mean(),
                    "min_fraction": r.min(),
                    "max_fraction": r.max(),
                    "optimum_hits": r.optimum_hits(),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return Ok(());
    }
    // A higher-is-better file's values are kept as reciprocals: its optimum is the value's.
    let (optimum, fraction) = if sim.cache.higher_is_better {
        (
            format!("{:.6} (highest {})", 1.0 / sim.optimum, sim.cache.objective),
            "best found / optimum",
        )
    } else {
        (format!("{:.6}", sim.optimum), "optimum / best found")
    };
    println!(
        "space: {} valid configurations, optimum {optimum}; {} seeds per row; fraction = {fraction}",
        sim.space.len(),
        args.seeds
    );
    if budgets.len() > 1 {
        print!("{:<14}", "strategy");
        for b in &budgets {
            print!(" {:>8}", b);
        }
        println!("   (mean fraction per budget)");
        for name in &names {
            print!("{:<14}", name);
            for (r, _) in rows.iter().filter(|(r, _)| &r.strategy == name) {
                print!(" {:>8.4}", r.mean());
            }
            println!();
        }
        return Ok(());
    }
    println!(
        "{:<14} {:>7} {:>8} {:>8} {:>8} {:>6} {:>8}",
        "strategy", "budget", "mean", "min", "max", "hits", "seconds"
    );
    for (r, secs) in &rows {
        println!(
            "{:<14} {:>7} {:>8.4} {:>8.4} {:>8.4} {:>3}/{:<2} {:>8.2}",
            r.strategy,
            r.budget,
            r.mean(),
            r.min(),
            r.max(),
            r.optimum_hits(),
            args.seeds,
            secs
        );
    }
    Ok(())
}
