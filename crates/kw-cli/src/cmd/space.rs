//! `kw space ...`

use anyhow::{Context, Result};
use clap::Subcommand;
use kw_core::kernel_tuner::{load_restrictions, load_space_spec};
use kw_core::{expr::Expr, space::TuningSpace};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand)]
pub enum SpaceCmd {
    /// Count a space's valid configurations (JSON: parameters, product, valid, seconds).
    Stats {
        /// A Kernel Tuner cache file (.json or .json.gz) or T1 specification file.
        spec: PathBuf,
        /// An extra restriction (repeatable), e.g. "block_size_x * block_size_y <= 1024".
        #[arg(long = "restriction")]
        restrictions: Vec<String>,
        /// A JSON file of restrictions: an array of strings, or a T1 file (its Conditions).
        #[arg(long)]
        restrictions_json: Option<PathBuf>,
    },
}

pub fn run(cmd: SpaceCmd) -> Result<()> {
    match cmd {
        SpaceCmd::Stats {
            spec,
            restrictions,
            restrictions_json,
        } => {
            let started = Instant::now();
            let mut spec_data = load_space_spec(&spec)?;
            for (i, text) in restrictions.iter().enumerate() {
                let e = Expr::parse(text).with_context(|| format!("--restriction #{}", i + 1))?;
                spec_data.restrictions.push(e);
            }
            if let Some(path) = restrictions_json {
                spec_data.restrictions.extend(load_restrictions(&path)?);
            }
            let space = TuningSpace::new(spec_data.params, spec_data.restrictions)
                .with_context(|| format!("building the space of {}", spec.display()))?;
            let seconds = started.elapsed().as_secs_f64();
            // Counts may exceed 64 bits: print them as exact JSON integers.
            println!(
                "{{\"parameters\": {}, \"product\": {}, \"valid\": {}, \"seconds\": {:.6}}}",
                space.params().len(),
                space.product(),
                space.len(),
                seconds
            );
            Ok(())
        }
    }
}
