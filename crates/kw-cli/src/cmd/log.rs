//! `kw log ...`: results logs of tuning runs.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum LogCmd {
    /// Export a results log (JSON lines) in another format.
    #[command(after_help = "Examples:\n  \
                            kw log export ~/.local/state/kernel-wisdom/logs/vector_add_4096.tune.jsonl --kt-cache kt.json\n  \
                            kw simulate kt.json --strategy all --budget 50")]
    #[command(group = clap::ArgGroup::new("output").required(true).multiple(true))]
    Export {
        /// The results log.
        log: PathBuf,
        /// Write it as a Kernel Tuner cache file here (this, --t4, or both).
        #[arg(long, group = "output")]
        kt_cache: Option<PathBuf>,
        /// Write it as a T4 results file (the auto-tuning community's results schema) here.
        #[arg(long, group = "output")]
        t4: Option<PathBuf>,
        /// Replace output files that exist (never the results log itself).
        #[arg(long)]
        force: bool,
    },
}

pub fn run(cmd: LogCmd) -> Result<()> {
    match cmd {
        LogCmd::Export {
            log,
            kt_cache,
            t4,
            force,
        } => {
            check_outputs(&log, &[kt_cache.as_deref(), t4.as_deref()], force)?;
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

/// Refuses outputs that would overwrite the results log, each other, or (without `--force`) a
/// file that exists, before anything is written.
fn check_outputs(log: &Path, outputs: &[Option<&Path>], force: bool) -> Result<()> {
    let same = kw_core::files::same_file;
    let outputs: Vec<&Path> = outputs.iter().flatten().copied().collect();
    for (i, out) in outputs.iter().enumerate() {
        if same(out, log) {
            bail!(
                "{}: is the results log being exported; not overwriting it (choose another output)",
                out.display()
            );
        }
        if outputs[..i].iter().any(|o| same(o, out)) {
            bail!(
                "{}: given as both --kt-cache and --t4; give each its own file",
                out.display()
            );
        }
        if !force && out.exists() {
            bail!(
                "{}: exists; not overwriting it (remove it, choose another name, or give --force)",
                out.display()
            );
        }
    }
    Ok(())
}
