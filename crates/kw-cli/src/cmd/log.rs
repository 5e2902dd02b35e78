//! `kw log ...`: results logs of tuning runs.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum LogCmd {
    /// Export a results log (JSON lines) in another format.
    #[command(after_help = "Examples:\n  \
                            kw log export ~/.local/state/kernel-wisdom/logs/vector_add_4096.tune.jsonl --kt-cache kt.json\n  \
                            kw simulate kt.json --strategy all --budget 50")]
    Export {
        /// The results log.
        log: PathBuf,
        /// Write it as a Kernel Tuner cache file here.
        #[arg(long, required_unless_present = "t4")]
        kt_cache: Option<PathBuf>,
        /// Write it as a T4 results file (the auto-tuning community's results schema) here.
        #[arg(long)]
        t4: Option<PathBuf>,
    },
}

pub fn run(cmd: LogCmd) -> Result<()> {
    match cmd {
        LogCmd::Export { log, kt_cache, t4 } => {
            if let Some(out) = kt_cache {
                let n =
                    kw_tune::export::export_log(&log, &out).context("exporting a results log")?;
                eprintln!("{n} configurations written to {}", out.display());
            }
            if let Some(out) = t4 {
                let n = kw_tune::export::export_log_t4(&log, &out)
                    .context("exporting a results log as T4")?;
                eprintln!("{n} results written to {}", out.display());
            }
            Ok(())
        }
    }
}
