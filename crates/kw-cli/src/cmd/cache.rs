//! `kw cache ls|stats|clear`: the on-disk compile cache (`kw_core::compile_cache`) that
//! applications and `kw tune` share.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kw_core::compile_cache::{store, CacheSettings};
use std::path::PathBuf;
use std::time::SystemTime;

#[derive(Subcommand)]
pub enum CacheCmd {
    /// List the entries, most recently used first (each is read and checked), with the
    /// options (tuned defines) that set each apart from its kernel's other entries.
    #[command(
        after_help = "Examples:\n  kw cache ls\n  kw cache ls --dir /scratch/kw-cache | grep vector_add"
    )]
    Ls(Where),
    /// Directory, size limit, entries and bytes per backend, entries that fail their checks.
    #[command(
        after_help = "Examples:\n  kw cache stats\n  KW_CACHE_DIR=/scratch/kw-cache kw cache stats"
    )]
    Stats(Where),
    /// Remove every entry.
    #[command(
        after_help = "Examples:\n  kw cache clear\n  kw cache clear --dir /scratch/kw-cache"
    )]
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
    let (dir, max) = resolve_dir(w)?;
    // A directory the runtime would refuse (writable by others, another owner) is said, as the
    // runtime says it: listed entries there are never used.
    if dir.is_dir() {
        if let Err(e) = kw_core::files::check_private_dir(&dir) {
            eprintln!("kw cache: warning: the runtime does not use this cache (it compiles without it): {e}");
        }
    }
    Ok((dir, max))
}

fn resolve_dir(w: &Where) -> Result<(PathBuf, u64)> {
    let settings = CacheSettings::from_env();
    for p in &settings.problems {
        eprintln!("kw: warning: {p}");
    }
    if let Some(d) = &w.dir {
        if !d.exists() {
            // A mistyped --dir would read as an empty cache.
            eprintln!(
                "kw cache: note: {}: no such directory (no compile cache there yet)",
                d.display()
            );
        }
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

/// Per entry, the compiler options that set it apart from the other entries of its kernel
/// and device (the tuned defines, typically): options every one of them shares are left
/// out. `-` when nothing differs (one entry, or only the compiler or source differ).
fn distinguishing(entries: &[store::Listed]) -> Vec<String> {
    use std::collections::HashMap;
    let words = |o: &str| -> Vec<String> { o.split_whitespace().map(str::to_string).collect() };
    let mut groups: HashMap<(String, String), Vec<Vec<String>>> = HashMap::new();
    for e in entries {
        if let Ok(h) = &e.header {
            groups
                .entry((h.kernel.clone(), h.device.clone()))
                .or_default()
                .push(words(&h.options));
        }
    }
    entries
        .iter()
        .map(|e| {
            let Ok(h) = &e.header else {
                return String::new();
            };
            let group = &groups[&(h.kernel.clone(), h.device.clone())];
            let own: Vec<String> = words(&h.options)
                .into_iter()
                .filter(|w| !group.iter().all(|g| g.contains(w)))
                .map(|w| w.strip_prefix("-D").map_or(w.clone(), str::to_string))
                .collect();
            if own.is_empty() {
                "-".into()
            } else {
                own.join(" ")
            }
        })
        .collect()
}

pub fn run(cmd: CacheCmd) -> Result<()> {
    match cmd {
        CacheCmd::Ls(w) => {
            let (dir, _) = resolve(&w)?;
            let entries =
                store::list(&dir).with_context(|| format!("listing {}", dir.display()))?;
            println!("{}: {} entries", dir.display(), entries.len());
            let differs = distinguishing(&entries);
            let rows: Vec<Vec<String>> = entries
                .iter()
                .zip(differs)
                .map(|(e, differs)| {
                    let key = e
                        .path
                        .file_stem()
                        .map(|s| s.to_string_lossy().chars().take(16).collect::<String>())
                        .unwrap_or_default();
                    match &e.header {
                        Ok(h) => vec![
                            key,
                            h.backend.clone(),
                            h.kind.clone(),
                            human(e.bytes),
                            when(e.last_used),
                            h.kernel.clone(),
                            h.device.clone(),
                            differs,
                        ],
                        Err(why) => vec![
                            key,
                            "UNUSABLE".into(),
                            "-".into(),
                            human(e.bytes),
                            when(e.last_used),
                            format!("{why} (it will be recompiled and replaced)"),
                        ],
                    }
                })
                .collect();
            if !rows.is_empty() {
                super::table::print(
                    &[
                        "key",
                        "backend",
                        "kind",
                        "size",
                        "last used",
                        "kernel",
                        "device",
                        "differs by",
                    ],
                    &rows,
                );
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
