//! `kw wisdom ...`: list, show, explain and merge wisdom files.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use kw_core::wisdom::{
    explain, find_wisdom_file, merge_files, select, wisdom_file_name, Query, WisdomFile,
};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum WisdomCmd {
    /// List the wisdom files of a directory.
    Ls {
        /// The wisdom directory.
        #[arg(default_value = "wisdom")]
        dir: PathBuf,
    },
    /// Show the records of a tuning key (or of a wisdom file given by path).
    Show {
        /// Tuning key, or path to a wisdom file.
        key: String,
        /// Wisdom directories to search (default: $KW_WISDOM_PATH, then ./wisdom).
        #[arg(long = "dir")]
        dirs: Vec<PathBuf>,
    },
    /// Explain which record the runtime would choose for a device and problem size, and why.
    Explain {
        /// Tuning key, or path to a wisdom file.
        key: String,
        /// Device name, as the driver reports it.
        #[arg(long)]
        device: String,
        /// Architecture (e.g. sm_90).
        #[arg(long, default_value = "")]
        arch: String,
        /// Backend (cuda or opencl); default: cuda for sm_* architectures, else any.
        #[arg(long)]
        backend: Option<String>,
        /// Problem size, e.g. 4096,4096.
        #[arg(long, value_delimiter = ',', num_args = 1..)]
        problem_size: Vec<i64>,
        /// Wisdom directories to search (default: $KW_WISDOM_PATH, then ./wisdom).
        #[arg(long = "dir")]
        dirs: Vec<PathBuf>,
    },
    /// Combine wisdom files from many tuning nodes, keeping the fastest record per device and size.
    Merge {
        /// Output directory (files in it take part in the merge too).
        out: PathBuf,
        /// Input wisdom files or directories of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
}

/// The search path: explicit dirs, else `KW_WISDOM_PATH` (':'-separated) then `./wisdom`.
fn search_path(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if !dirs.is_empty() {
        return dirs;
    }
    let mut out: Vec<PathBuf> = std::env::var_os("KW_WISDOM_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    out.push(PathBuf::from("wisdom"));
    out
}

fn load(key: &str, dirs: Vec<PathBuf>) -> Result<(PathBuf, WisdomFile)> {
    let as_path = Path::new(key);
    if as_path.is_file() {
        return Ok((as_path.to_path_buf(), WisdomFile::load(as_path)?));
    }
    let dirs = search_path(dirs);
    let (found, errors) = find_wisdom_file(key, &dirs);
    for e in &errors {
        eprintln!("kw: warning: skipping {e}");
    }
    match found {
        Some(f) => Ok(f),
        None => bail!(
            "no wisdom file `{}` for tuning key `{key}` in {}",
            wisdom_file_name(key),
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn wisdom_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list the directory", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn size(s: &[i64]) -> String {
    s.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

pub fn run(cmd: WisdomCmd) -> Result<()> {
    match cmd {
        WisdomCmd::Ls { dir } => {
            for path in wisdom_files_in(&dir)? {
                match WisdomFile::load(&path) {
                    Ok(f) => {
                        let mut devices: Vec<&str> =
                            f.records.iter().map(|r| r.device.name.as_str()).collect();
                        devices.sort();
                        devices.dedup();
                        println!(
                            "{}\t{}\t{} record(s)\t{}",
                            path.display(),
                            f.tuning_key,
                            f.records.len(),
                            devices.join("; ")
                        );
                    }
                    Err(e) => println!("{}\tINVALID: {e}", path.display()),
                }
            }
            Ok(())
        }
        WisdomCmd::Show { key, dirs } => {
            let (path, file) = load(&key, dirs)?;
            println!(
                "{} (tuning key `{}`, {} records)",
                path.display(),
                file.tuning_key,
                file.records.len()
            );
            for (i, r) in file.records.iter().enumerate() {
                println!(
                    "#{:<3} {:<14} {:<30} {:<8} {:>10.4} ms  {}{}",
                    i + 1,
                    size(&r.problem_size),
                    r.device.name,
                    r.device.architecture,
                    r.objective.median_ms,
                    r.config.key(),
                    if r.provenance.verified == Some(false) {
                        "  UNVERIFIED"
                    } else {
                        ""
                    }
                );
            }
            Ok(())
        }
        WisdomCmd::Explain {
            key,
            device,
            arch,
            backend,
            problem_size,
            dirs,
        } => {
            let (path, file) = load(&key, dirs)?;
            let backend = backend.unwrap_or_else(|| {
                if arch.starts_with("sm_") {
                    "cuda".into()
                } else {
                    String::new()
                }
            });
            let query = Query {
                device_name: device,
                architecture: arch,
                backend,
                problem_size,
            };
            let selection = select(&file.records, &query, |_| Ok(()));
            println!(
                "wisdom for `{}`: {} ({} records)",
                file.tuning_key,
                path.display(),
                file.records.len()
            );
            print!("{}", explain(&file.records, &query, &selection));
            Ok(())
        }
        WisdomCmd::Merge { out, inputs } => {
            let mut files = Vec::new();
            let mut paths = Vec::new();
            if out.is_dir() {
                paths.extend(wisdom_files_in(&out)?);
            }
            for input in &inputs {
                if input.is_dir() {
                    paths.extend(wisdom_files_in(input)?);
                } else {
                    paths.push(input.clone());
                }
            }
            for p in &paths {
                files.push(WisdomFile::load(p)?);
            }
            let before: usize = files.iter().map(|f| f.records.len()).sum();
            let merged = merge_files(files);
            std::fs::create_dir_all(&out)
                .with_context(|| format!("{}: cannot create", out.display()))?;
            for f in &merged {
                let path = out.join(wisdom_file_name(&f.tuning_key));
                f.save(&path)?;
                println!("{}: {} record(s)", path.display(), f.records.len());
            }
            let after: usize = merged.iter().map(|f| f.records.len()).sum();
            println!(
                "merged {} file(s), {before} record(s) -> {after} record(s)",
                paths.len()
            );
            Ok(())
        }
    }
}
