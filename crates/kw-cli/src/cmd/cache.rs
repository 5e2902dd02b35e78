//! `kw cache ls|stats|clear`: the on-disk compile cache (`kw_core::compile_cache`) that
//! applications and `kw tune` share.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kw_core::compile_cache::{store, CacheSettings};
use std::path::PathBuf;
use std::time::SystemTime;

#[derive(Subcommand)]
pub enum CacheCmd {
    /// List the entries, most recently used first (each is read and checked).
    Ls(Where),
    /// Directory, size limit, entries and bytes per backend, entries that fail their checks.
    Stats(Where),
    /// Remove every entry.
    Clear(Where),
}

/// Which cache.
#[derive(Args)]
pub struct Where {
    /// The cache directory (default: KW_CACHE_DIR, else the user's cache directory).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// The directory to work on and the limit, reporting settings problems.
fn resolve(w: &Where) -> Result<(PathBuf, u64)> {
    let settings = CacheSettings::from_env();
    for p in &settings.problems {
        eprintln!("kw: warning: {p}");
    }
    if let Some(d) = &w.dir {
        return Ok((d.clone(), settings.max_bytes));
    }
    match settings.dir {
        Some(d) => Ok((d, settings.max_bytes)),
        None => {
            let reason = settings.off_reason.unwrap_or_default();
            anyhow::bail!("the compile cache is off ({reason}); name a directory with --dir")
        }
    }
}

/// `12.3 KiB`.
fn human(bytes: u64) -> String {
    kw_core::diag::bytes(bytes)
}

fn when(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(t)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

pub fn run(cmd: CacheCmd) -> Result<()> {
    match cmd {
        CacheCmd::Ls(w) => {
            let (dir, _) = resolve(&w)?;
            let entries =
                store::list(&dir).with_context(|| format!("listing {}", dir.display()))?;
            println!("{}: {} entries", dir.display(), entries.len());
            for e in entries {
                let key = e
                    .path
                    .file_stem()
                    .map(|s| s.to_string_lossy().chars().take(16).collect::<String>())
                    .unwrap_or_default();
                match e.header {
                    Ok(h) => println!(
                        "{key}  {:<6} {:<13} {:>10}  {}  {}  on {}",
                        h.backend,
                        h.kind,
                        human(e.bytes),
                        when(e.last_used),
                        h.kernel,
                        h.device
                    ),
                    Err(why) => println!(
                        "{key}  UNUSABLE {:>10}  {}  {why} (it will be recompiled and replaced)",
                        human(e.bytes),
                        when(e.last_used)
                    ),
                }
            }
            Ok(())
        }
        CacheCmd::Stats(w) => {
            let (dir, max) = resolve(&w)?;
            let entries =
                store::list(&dir).with_context(|| format!("listing {}", dir.display()))?;
            let total: u64 = entries.iter().map(|e| e.bytes).sum();
            println!("directory: {}", dir.display());
            println!(
                "size: {} in {} entries, limit {} ({:.1}% used)",
                human(total),
                entries.len(),
                human(max),
                100.0 * total as f64 / max.max(1) as f64
            );
            let mut per: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
            let mut bad = 0usize;
            for e in &entries {
                match &e.header {
                    Ok(h) => {
                        let s = per.entry(format!("{} {}", h.backend, h.kind)).or_default();
                        s.0 += 1;
                        s.1 += e.bytes;
                    }
                    Err(_) => bad += 1,
                }
            }
            for (what, (n, b)) in per {
                println!("  {what}: {n} entries, {}", human(b));
            }
            println!("unusable entries (corrupt, truncated, foreign): {bad}");
            if let (Some(newest), Some(oldest)) = (entries.first(), entries.last()) {
                println!(
                    "last used: newest {}, oldest {}",
                    when(newest.last_used),
                    when(oldest.last_used)
                );
            }
            Ok(())
        }
        CacheCmd::Clear(w) => {
            let (dir, _) = resolve(&w)?;
            let (n, bytes) =
                store::clear(&dir).with_context(|| format!("clearing {}", dir.display()))?;
            println!(
                "removed {n} entries ({}) from {}",
                human(bytes),
                dir.display()
            );
            Ok(())
        }
    }
}
