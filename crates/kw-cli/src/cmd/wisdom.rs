//! `kw wisdom ...`: list, show, explain and merge wisdom files.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use kw_core::space::TuningSpace;
use kw_core::wisdom::{
    explain_numbered, find_wisdom_files, merge_into, select, wisdom_file_name, Query, WisdomFile,
    WisdomRecord,
};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum WisdomCmd {
    /// List the wisdom files of a directory (default: every directory of the search path).
    #[command(after_help = "Examples:\n  kw wisdom ls\n  kw wisdom ls wisdom/")]
    Ls {
        /// The wisdom directory (default: KW_WISDOM_PATH, the per-user wisdom directory,
        /// ./wisdom and online tuning's directory, those that exist).
        dir: Option<PathBuf>,
    },
    /// Show the records of a tuning key (or of a wisdom file given by path).
    #[command(
        after_help = "Examples:\n  kw wisdom show vector_add\n  kw wisdom show wisdom/vector_add.json"
    )]
    Show {
        /// Tuning key, or path to a wisdom file.
        key: std::ffi::OsString,
        /// Wisdom directories to search (default: $KW_WISDOM_PATH, the per-user wisdom
        /// directory, ./wisdom, then online tuning's directory).
        #[arg(long = "dir")]
        dirs: Vec<PathBuf>,
    },
    /// Explain which record the runtime would choose for a device and problem size, and why.
    #[command(
        after_help = "Examples:\n  kw wisdom explain vector_add --device 0 --problem-size 3000000\n  \
                            kw wisdom explain kw_gemm --device H100 --arch sm_90 --problem-size 4096,4096,4096"
    )]
    Explain {
        /// Tuning key, or path to a wisdom file.
        key: std::ffi::OsString,
        /// The device: an index or a name substring of a device here (as `kw devices`
        /// lists them), or a device name of the records (exact, or a substring of one).
        #[arg(long)]
        device: String,
        /// Architecture (e.g. sm_90); default: the device's.
        #[arg(long, default_value = "")]
        arch: String,
        /// Backend (cuda or opencl); default: cuda for sm_* architectures, else the device's backend.
        #[arg(long, value_parser = ["cuda", "opencl"])]
        backend: Option<String>,
        /// Problem size, e.g. 4096,4096 (the selection depends on it).
        #[arg(long, value_delimiter = ',', num_args = 1.., required = true)]
        problem_size: Vec<i64>,
        /// Wisdom directories to search (default: $KW_WISDOM_PATH, the per-user wisdom
        /// directory, ./wisdom, then online tuning's directory).
        #[arg(long = "dir")]
        dirs: Vec<PathBuf>,
        /// A capture of the kernel: records whose configuration its tuning space (on the
        /// captured device) rejects are skipped, as the runtime skips them.
        #[arg(long)]
        capture: Option<PathBuf>,
    },
    /// Combine wisdom files from many tuning nodes, keeping the fastest usable record per
    /// device, size and tuning space (under the lock `kw tune` takes).
    #[command(after_help = "Examples:\n  kw wisdom merge wisdom/ node1/wisdom node2/wisdom")]
    Merge {
        /// Output directory (files in it take part in the merge too).
        out: PathBuf,
        /// Input wisdom files or directories of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
}

/// The search path: explicit dirs, else the runtime's (`KW_WISDOM_PATH`, then `./wisdom`).
fn search_path(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if dirs.is_empty() {
        kernel_wisdom::search_path(None)
    } else {
        dirs
    }
}

/// The wisdom files `KEY` names: the file itself when it is a path to one, else every file of
/// that tuning key on the search path, in its order (the runtime reads them all: the one whose
/// best match comes at the earliest selection step wins).
fn load_all(key: &std::ffi::OsStr, dirs: Vec<PathBuf>) -> Result<Vec<(PathBuf, WisdomFile)>> {
    let as_path = Path::new(key);
    if as_path.is_file() {
        return Ok(vec![(as_path.to_path_buf(), WisdomFile::load(as_path)?)]);
    }
    // Tuning keys are text: a name that is not is a path, and not a wisdom file.
    let Some(key) = key.to_str() else {
        bail!("{}", not_a_wisdom_file(as_path));
    };
    let dirs = search_path(dirs);
    let (found, errors) = find_wisdom_files(key, &dirs);
    for e in &errors {
        // The found files' own skipped records are said by the command, with the others'.
        let of_found = match e {
            kw_core::wisdom::WisdomError::Invalid { path, .. }
            | kw_core::wisdom::WisdomError::RecordLeftOut { path, .. } => {
                found.iter().any(|(p, _)| p == path)
            }
            _ => false,
        };
        if !of_found {
            eprintln!("kw: warning: skipping {}", printable(&e.to_string()));
        }
    }
    match found {
        f if !f.is_empty() => Ok(f),
        // A path that is not a readable regular file (and no wisdom of such a key either).
        _ if looks_like_path(key) => bail!("{}", not_a_wisdom_file(Path::new(key))),
        _ => bail!(
            "no {}wisdom file `{}` for tuning key `{key}` in {}",
            if errors.is_empty() { "" } else { "usable " },
            wisdom_file_name(key),
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `kw wisdom show` of one file: its records, numbered by their place in the file, with the
/// text that comes from the file made printable (a device name cannot move the terminal).
fn show_file(path: &Path, file: &WisdomFile) {
    warn_skipped("show", path, file);
    // Numbered by their place in the file, as the skipped records are.
    let numbers = file.record_numbers();
    for (r, n) in file.records.iter().zip(&numbers) {
        if let Some(why) = r.defect() {
            eprintln!(
                "kw wisdom show: warning: {}: record #{n} cannot be used: {} (the \
                 runtime skips it; kw wisdom merge leaves it out)",
                path.display(),
                printable(&why)
            );
        }
    }
    println!(
        "{} (tuning key `{}`, {})",
        path.display(),
        printable(&file.tuning_key),
        records_words(file)
    );
    for (r, n) in file.records.iter().zip(&numbers) {
        println!(
            "#{:<3} {:<14} {:<30} {:<8} {:>10} ms  {}{}{}",
            n,
            size(&r.problem_size),
            printable(&r.device.name),
            printable(&r.device.architecture),
            kw_core::diag::figure(r.objective.median_ms),
            printable(&r.config.key()),
            if r.provenance.verified == Some(false) {
                "  UNVERIFIED"
            } else {
                ""
            },
            if r.provenance.is_online() {
                "  online"
            } else {
                ""
            }
        );
        let missing = missing_parameters(r, None);
        if !missing.is_empty() {
            println!("     note: {}", missing_note(&missing));
        }
    }
}

/// Whether a `KEY` argument is meant as a path: it has a path separator or ends in `.json`.
fn looks_like_path(key: &str) -> bool {
    key.contains('/') || key.contains(std::path::MAIN_SEPARATOR) || key.ends_with(".json")
}

/// Why `key`, a path, is not a wisdom file that can be read: it does not exist, is a
/// directory or another kind of file, or the OS error (a symbolic link loop, ...).
fn not_a_wisdom_file(key: &Path) -> String {
    let shown = printable(&key.to_string_lossy());
    match std::fs::metadata(key) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("`{shown}`: no such file"),
        Err(e) => format!("`{shown}`: {e}"),
        Ok(m) if m.is_dir() => format!("`{shown}`: is a directory, not a wisdom file"),
        Ok(_) => format!("`{shown}`: not a regular file, not a wisdom file"),
    }
}

/// The parameters a record's configuration lacks that the runtime gives their default: those
/// of its own recorded space, or with `space` (the kernel's current space) those of `space`
/// (as [`WisdomRecord::add_new_parameters`] does at run time). Each with that default.
fn missing_parameters(
    r: &WisdomRecord,
    space: Option<&TuningSpace>,
) -> Vec<(String, kw_core::value::Value)> {
    let params = match space {
        Some(s) => s.params(),
        None => r.space.parameters.as_slice(),
    };
    params
        .iter()
        .filter(|p| r.config.get(&p.name).is_none())
        .map(|p| (p.name.clone(), p.default.clone()))
        .collect()
}

/// "`P` missing: the runtime uses its default V", for each of [`missing_parameters`].
fn missing_note(missing: &[(String, kw_core::value::Value)]) -> String {
    missing
        .iter()
        .map(|(name, default)| {
            printable(&format!(
                "`{name}` missing: the runtime uses its default {default}"
            ))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(crate) fn wisdom_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
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

/// Says on standard error which records of `file` (read from `path`) were skipped when it was
/// loaded, and why: the reasons `kw wisdom merge` gives for leaving them out
/// ([`WisdomFile::rejected`], "record #N: why", N counting the file's records from 1).
fn warn_skipped(command: &str, path: &Path, file: &WisdomFile) {
    for why in &file.rejected {
        eprintln!(
            "kw wisdom {command}: warning: {}: skipped {}",
            path.display(),
            printable(why)
        );
    }
    // Alternates left out of records that are kept ([`WisdomFile::notes`]).
    for why in &file.notes {
        eprintln!(
            "kw wisdom {command}: warning: {}: {}",
            path.display(),
            printable(why)
        );
    }
}

/// `text` without control characters (reasons may quote the file), at most 300 characters.
fn printable(text: &str) -> String {
    super::table::printable(&text.chars().take(300).collect::<String>())
}

/// How many of `file`'s records a selection can use, and how many are skipped: those left
/// out when it was read ([`WisdomFile::rejected`]) and those that read but cannot be used
/// (`WisdomRecord::defect`). `ls`, `show` and `explain` count alike.
fn usable_and_skipped(file: &WisdomFile) -> (usize, usize) {
    let usable = file.records.iter().filter(|r| r.defect().is_none()).count();
    (usable, file.rejected.len() + file.records.len() - usable)
}

/// `N records`, or `N usable records, M skipped: see the warnings` ([`usable_and_skipped`];
/// `1 record`, `1 usable record`).
fn records_words(file: &WisdomFile) -> String {
    match usable_and_skipped(file) {
        (usable, 0) => kw_core::diag::count(usable, "record"),
        (usable, n) => format!(
            "{}, {n} skipped: see the warnings",
            kw_core::diag::count(usable, "usable record")
        ),
    }
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
            let dirs: Vec<PathBuf> = match dir {
                Some(d) => vec![d],
                None => search_path(Vec::new())
                    .into_iter()
                    .filter(|d| d.is_dir())
                    .collect(),
            };
            if dirs.is_empty() {
                println!("no wisdom directory exists on the search path");
            }
            let mut rows = Vec::new();
            let mut invalid = 0usize;
            for dir in &dirs {
                let files = wisdom_files_in(dir)?;
                if files.is_empty() {
                    println!("no wisdom files (*.json) in {}", dir.display());
                }
                for path in files {
                    rows.push(match WisdomFile::load(&path) {
                        Ok(f) => {
                            warn_skipped("ls", &path, &f);
                            let mut devices: Vec<&str> =
                                f.records.iter().map(|r| r.device.name.as_str()).collect();
                            devices.sort();
                            devices.dedup();
                            // Records that load but that no selection uses (an undeclared
                            // value) are skipped too, as `show` says and the runtime does.
                            let numbers = f.record_numbers();
                            for (r, n) in f.records.iter().zip(&numbers) {
                                if let Some(why) = r.defect() {
                                    eprintln!(
                                        "kw wisdom ls: warning: {}: record #{n} cannot be used: \
                                         {} (the runtime skips it)",
                                        path.display(),
                                        printable(&why)
                                    );
                                }
                            }
                            let records = match usable_and_skipped(&f) {
                                (usable, 0) => usable.to_string(),
                                (usable, n) => format!("{usable} ({n} skipped)"),
                            };
                            vec![
                                path.display().to_string(),
                                f.tuning_key.clone(),
                                records,
                                devices.join("; "),
                            ]
                        }
                        Err(e) => {
                            invalid += 1;
                            vec![path.display().to_string(), format!("INVALID: {e}")]
                        }
                    });
                }
            }
            if !rows.is_empty() {
                super::table::print(&["file", "tuning key", "records", "devices"], &rows);
            }
            if invalid > 0 {
                bail!(
                    "{invalid} of {} wisdom files cannot be read (INVALID above)",
                    rows.len()
                );
            }
            Ok(())
        }
        WisdomCmd::Show { key, dirs } => {
            for (i, (path, file)) in load_all(&key, dirs)?.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                show_file(path, file);
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
            capture,
        } => {
            if device.trim().is_empty() {
                bail!("--device: the device name is empty (give an index or a name)");
            }
            if let Some(a) = problem_size.iter().find(|&&a| a < 1) {
                bail!(
                    "--problem-size {}: every axis must be at least 1, not {a}",
                    problem_size
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
            let mut files = load_all(&key, dirs)?;
            for (path, file) in &files {
                warn_skipped("explain", path, file);
            }
            let tuning_key = files[0].1.tuning_key.clone();
            let space = match &capture {
                Some(c) => {
                    let cap = kw_capture::Capture::open(c)?;
                    let meta: kw_core::capture_meta::CaptureMetadata = cap.metadata_as()?;
                    if meta.kernel.tuning_key != tuning_key {
                        bail!(
                            "{} is a capture of tuning key `{}`, the wisdom file {} is of \
                             tuning key `{}`: pass a capture of the same kernel",
                            c.display(),
                            printable(&meta.kernel.tuning_key),
                            files[0].0.display(),
                            printable(&tuning_key)
                        );
                    }
                    // The space on the capture's device (restrictions may use its limits).
                    let space = meta
                        .kernel
                        .space(Some(&meta.device))
                        .with_context(|| format!("{}: the kernel's tuning space", c.display()))?;
                    Some((space, meta))
                }
                None => None,
            };
            // Said before they are filled in: the records that lack a parameter the runtime
            // gives its default (a different configuration from the one measured).
            let mut missing: Vec<Vec<(usize, String)>> = Vec::new();
            for (_, file) in &mut files {
                let numbers = file.record_numbers();
                missing.push(
                    file.records
                        .iter()
                        .zip(&numbers)
                        .filter_map(|(r, n)| {
                            let m = missing_parameters(r, space.as_ref().map(|(s, _)| s));
                            (!m.is_empty()).then(|| (*n, missing_note(&m)))
                        })
                        .collect(),
                );
                // As the runtime reads them: a parameter the records predate takes its
                // default (without a capture, the default of the record's own space).
                for r in &mut file.records {
                    match &space {
                        Some((space, _)) => r.add_new_parameters(space),
                        None => {
                            for (name, default) in missing_parameters(r, None) {
                                r.config.set(&name, default);
                            }
                        }
                    }
                }
            }
            let mut ps = [1i64; 3];
            for (axis, v) in problem_size.iter().take(3).enumerate() {
                ps[axis] = *v;
            }
            let all_records: Vec<WisdomRecord> = files
                .iter()
                .flat_map(|(_, f)| f.records.iter().cloned())
                .collect();
            let target = super::wisdom_device::resolve(&device, &all_records)?;
            let arch = if arch.is_empty() {
                target.architecture
            } else {
                arch
            };
            let backend = backend.unwrap_or_else(|| {
                if arch.starts_with("sm_") {
                    "cuda".into()
                } else {
                    target.backend
                }
            });
            let query = Query {
                device_name: target.name,
                architecture: arch,
                backend,
                problem_size,
            };
            // Records with a defect (negative time, undeclared value) are skipped by `select`
            // itself; with a capture, so are those the current space rejects.
            // With a capture, records whose configuration is not valid at the query's problem
            // size (restrictions over the problem size) are skipped too, as the runtime does.
            let selections: Vec<_> = files
                .iter()
                .map(|(_, file)| {
                    select(&file.records, &query, |r| match &space {
                        Some((space, meta)) => r.check_against(space).map(|_| ()).and_then(|()| {
                            meta.kernel
                                .check_at_launch(&r.config, &ps, None, Some(&meta.device))
                                .map_err(|e| format!("not valid at this problem size: {e}"))
                        }),
                        None => Ok(()),
                    })
                })
                .collect();
            // As the runtime chooses between the files of the search path: the one whose best
            // match comes at the earliest step; the earlier file on ties.
            let chosen = kw_core::wisdom::earliest_step(&selections).unwrap_or(0);
            let (path, file) = &files[chosen];
            let selection = &selections[chosen];
            println!(
                "wisdom for `{}`: {} ({})",
                printable(&file.tuning_key),
                path.display(),
                records_words(file)
            );
            for (n, note) in &missing[chosen] {
                println!("note: record #{n}: {note} (filled in below)");
            }
            let explained =
                explain_numbered(&file.records, &file.record_numbers(), &query, selection);
            for line in explained.lines() {
                println!("{}", super::table::printable(line));
            }
            for (i, (other, f)) in files.iter().enumerate() {
                if i != chosen {
                    println!(
                        "also on the search path: {} ({}): its best match is at {}; the file \
                         whose match comes at the earliest step is used (the earlier file on \
                         ties)",
                        other.display(),
                        kw_core::diag::count(f.records.len(), "record"),
                        selections[i].step
                    );
                }
            }
            match &space {
                Some((_, meta)) if selection.record.is_none() => {
                    let default = meta.kernel.default_config();
                    if let Err(e) =
                        meta.kernel
                            .check_at_launch(&default, &ps, None, Some(&meta.device))
                    {
                        println!(
                            "the default configuration is not valid at this problem size \
                             either ({e}): a launch there is an error, nothing is launched"
                        );
                    }
                }
                Some(_) => {}
                None => println!(
                    "(without --capture, validity at this problem size is not checked: pass \
                     the kernel's capture to skip records whose configuration is not valid here)"
                ),
            }
            Ok(())
        }
        WisdomCmd::Merge { out, inputs } => merge(&out, &inputs),
    }
}

/// `kw wisdom merge OUT INPUT...` (also the merge of `kw slurm`'s shards): every wisdom file
/// of the inputs (files, or directories of them) merged into `out` under the lock `kw tune`
/// takes, keeping the fastest usable record per device, size and tuning space; prints each
/// file written and what was left out.
pub(crate) fn merge(out: &Path, inputs: &[PathBuf]) -> Result<()> {
    let out_canon = std::fs::canonicalize(out).ok();
    let mut paths = Vec::new();
    for input in inputs {
        if input.is_dir() {
            if std::fs::canonicalize(input).ok() == out_canon && out_canon.is_some() {
                continue; // the output's own files are merged under the lock
            }
            let found = wisdom_files_in(input)?;
            if found.is_empty() {
                eprintln!(
                    "kw wisdom merge: warning: {} holds no wisdom file (*.json)",
                    input.display()
                );
            }
            paths.extend(found);
        } else {
            paths.push(input.clone());
        }
    }
    let mut files = Vec::new();
    for p in &paths {
        let (mut f, unknown) = WisdomFile::load_noting_unknown(p)?;
        // The records left out are reported after the merge: each names its file.
        f.set_aside_unmergeable();
        for why in &mut f.rejected {
            *why = format!("{}: {why}", p.display());
        }
        for why in &f.notes {
            eprintln!("kw wisdom merge: {}: {}", p.display(), printable(why));
        }
        if let Some(note) = unknown {
            eprintln!("kw wisdom merge: warning: {}", printable(&note));
        }
        files.push(f);
    }
    let (written, report) = merge_into(out, files)?;
    for (key, why) in &report.dropped {
        eprintln!(
            "kw wisdom merge: left out a record of `{key}`: {}",
            printable(why)
        );
    }
    let mut after = 0;
    for (path, n) in &written {
        println!("{}: {n} record(s)", path.display());
        after += n;
    }
    // Records of one slot (device, size, space) in several files: the fastest is kept.
    let replaced = report.read.saturating_sub(after + report.dropped.len());
    println!(
        "merged {} file(s) into {}, {} record(s) read -> {after} record(s), {} left out, \
         {replaced} in a slot a faster record holds",
        paths.len(),
        out.display(),
        report.read,
        report.dropped.len()
    );
    Ok(())
}
