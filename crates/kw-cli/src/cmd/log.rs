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
        #[arg(long)]
        kt_cache: PathBuf,
    },
}

pub fn run(cmd: LogCmd) -> Result<()> {
    match cmd {
        LogCmd::Export { log, kt_cache } => {
            let n =
                kw_tune::export::export_log(&log, &kt_cache).context("exporting a results log")?;
            eprintln!("{n} configurations written to {}", kt_cache.display());
            Ok(())
        }
    }
}
