//! `kw report INPUT... -o DIR`: one self-contained HTML page (inline style and SVG figures,
//! no script, nothing fetched) about results logs, wisdom directories, captures and
//! `kw simulate --json` output.
//!
//! One concern per file: [`html`] (the page), [`svg`] (the figures), [`run`](mod@run) (a tuning run),
//! [`wisdom`] (a wisdom set), [`strategies`] (a strategy comparison), [`captures`].

mod captures;
mod html;
mod run;
mod strategies;
mod svg;
mod wisdom;

use anyhow::{bail, Context, Result};
use clap::Args;
pub use kw_core::diag::ratio_words;
use kw_core::wisdom::WisdomFile;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ReportArgs {
    /// Results logs (.jsonl), wisdom directories or files, captures (.kwcap, or directories
    /// holding them) and `kw simulate --json` output files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The directory to write the report into (`index.html`; created when missing).
    #[arg(short, long)]
    out: PathBuf,
    /// A peer's strategy scores, in `kw simulate --json` form, drawn beside ours.
    #[arg(long)]
    peer: Vec<PathBuf>,
    /// The report's title.
    #[arg(long, default_value = "kernel-wisdom report")]
    title: String,
}

/// What an input file is.
enum Input {
    Log(PathBuf),
    Wisdom(PathBuf, Vec<PathBuf>),
    Capture(PathBuf),
    Simulation(PathBuf, serde_json::Value),
}

/// The `format` field of a file's first JSON line, if it has one; `None` also for what is no
/// regular file (a FIFO is never waited on: the reader that follows refuses it, naming it).
fn first_line_format(path: &Path) -> Option<String> {
    use kw_core::files::{caps, open_regular, ReadRules};
    use std::io::Read;
    let (file, _) = open_regular(path, ReadRules::new("report input", caps::DOCUMENT)).ok()?;
    let mut line = String::new();
    BufReader::new(file.take(1 << 20))
        .read_line(&mut line)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    v.get("format")?.as_str().map(str::to_string)
}

/// A JSON document (scores, a wisdom file), read with the files module's size cap.
fn read_json(path: &Path, what: &'static str) -> Result<serde_json::Value> {
    let rules = kw_core::files::ReadRules::new(what, kw_core::files::caps::WISDOM);
    let text = kw_core::files::read_to_string(path, rules)?;
    serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))
}

/// Sorts `path` into the inputs it holds.
fn classify(path: &Path, out: &mut Vec<Input>) -> Result<()> {
    let is_capture = |p: &Path| p.extension().is_some_and(|e| e == kw_capture::EXTENSION);
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("{}: cannot list the directory", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        let before = out.len();
        // `*.json`: wisdom files (`"format": "kernel-wisdom"`, or damaged ones that say so),
        // `kw simulate --json` output kept beside them; other JSON (a Kernel Tuner cache, a
        // T1 file, a kw slurm manifest) is not the report's: skipped with a note.
        let mut wisdom = Vec::new();
        let mut simulations = Vec::new();
        for f in crate::cmd::wisdom::wisdom_files_in(path)? {
            let is_wisdom = |v: &serde_json::Value| {
                v.get("format").and_then(|x| x.as_str()) == Some("kernel-wisdom")
            };
            let claims_wisdom = || {
                use kw_core::files::{caps, read, ReadRules};
                read(&f, ReadRules::new("report input", caps::WISDOM))
                    .is_ok_and(|b| b.windows(14).any(|w| w == b"kernel-wisdom\""))
            };
            match read_json(&f, "report input") {
                Ok(v) if is_wisdom(&v) => wisdom.push(f),
                Ok(v) if strategies::is_simulation(&v) => simulations.push(Input::Simulation(f, v)),
                Err(_) if claims_wisdom() => wisdom.push(f),
                _ => eprintln!(
                    "kw report: note: {}: not a wisdom file or `kw simulate --json` output: \
                     skipped",
                    f.display()
                ),
            }
        }
        if !wisdom.is_empty() {
            out.push(Input::Wisdom(path.to_path_buf(), wisdom));
        }
        out.extend(simulations);
        for e in entries {
            if is_capture(&e) {
                out.push(Input::Capture(e));
            } else if e.extension().is_some_and(|x| x == "jsonl")
                && first_line_format(&e).as_deref() == Some(kw_tune::log::LOG_FORMAT)
            {
                out.push(Input::Log(e));
            }
        }
        if out.len() == before {
            bail!(
                "{}: holds no wisdom file, capture or results log",
                path.display()
            );
        }
        return Ok(());
    }
    if is_capture(path) {
        out.push(Input::Capture(path.to_path_buf()));
        return Ok(());
    }
    match first_line_format(path).as_deref() {
        Some(kw_tune::log::LOG_FORMAT) => out.push(Input::Log(path.to_path_buf())),
        Some("kernel-wisdom") => {
            out.push(Input::Wisdom(path.to_path_buf(), vec![path.to_path_buf()]))
        }
        _ => {
            let v = read_json(path, "report input").map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a results log, wisdom file, capture or `kw simulate --json` \
                     output ({e})",
                    path.display()
                )
            })?;
            if let Some("kernel-wisdom") = v.get("format").and_then(|f| f.as_str()) {
                out.push(Input::Wisdom(path.to_path_buf(), vec![path.to_path_buf()]));
            } else if strategies::is_simulation(&v) {
                out.push(Input::Simulation(path.to_path_buf(), v));
            } else {
                bail!(
                    "{}: not a results log, wisdom file, capture or `kw simulate --json` output",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

pub fn run(args: ReportArgs) -> Result<()> {
    let mut inputs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in &args.inputs {
        // A path named twice makes its sections once.
        if seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())) {
            classify(p, &mut inputs)?;
        }
    }
    let mut page = html::Page::new();
    let mut scores = Vec::new();
    let mut sources = Vec::new();
    let mut capture_files = Vec::new();
    // Inputs that could not be read at all: said on the page, on standard error, and in the
    // exit status (the report is still written, with what could be read).
    let mut unreadable = Vec::new();
    for input in &inputs {
        match input {
            Input::Log(p) => {
                let mut log = kw_tune::log::read_log(p)?;
                // An edited line (a value the log does not declare) is no result of the run:
                // left out, with a warning, as `kw log export` and a resume leave it out.
                log.records = kw_tune::export::consistent_records(
                    p,
                    &log.header,
                    std::mem::take(&mut log.records),
                );
                run::section(&mut page, p, &log)?;
            }
            Input::Wisdom(dir, files) => {
                let mut loaded = Vec::new();
                let mut problems = Vec::new();
                for f in files {
                    match WisdomFile::load(f) {
                        Ok(mut w) => {
                            // Records that load but that no selection uses (an undeclared
                            // value, a time that is not positive): left out of the maps and
                            // tables, and said, as `kw wisdom show` says them.
                            let numbers = w.record_numbers();
                            let mut unusable = Vec::new();
                            let mut i = 0;
                            w.records.retain(|r| {
                                let n = numbers[i];
                                i += 1;
                                match r.defect() {
                                    Some(why) => {
                                        unusable.push(format!("record #{n} cannot be used: {why}"));
                                        false
                                    }
                                    None => true,
                                }
                            });
                            for why in &unusable {
                                let line = kw_core::diag::one_line(
                                    &format!("{}: {why}", f.display()),
                                    4000,
                                );
                                eprintln!("kw report: warning: {line}");
                                problems.push(line);
                            }
                            // Records (and alternates) left out are said on the page and on
                            // standard error, as `kw wisdom ls` says them.
                            let rejected = w.rejected.iter().map(|why| format!("skipped {why}"));
                            for why in rejected.chain(w.notes.iter().cloned()) {
                                let line = kw_core::diag::one_line(
                                    &format!("{}: {why}", f.display()),
                                    4000,
                                );
                                eprintln!("kw report: warning: {line}");
                                problems.push(line);
                            }
                            loaded.push((f.display().to_string(), w));
                        }
                        Err(e) => {
                            problems.push(format!("left out: {e}"));
                            unreadable.push(e.to_string());
                        }
                    }
                }
                wisdom::section(&mut page, dir, &loaded, &problems)?;
            }
            Input::Capture(p) => capture_files.push(p.clone()),
            Input::Simulation(p, v) => {
                scores.extend(strategies::scores(p, v, false)?);
                sources.push(p.display().to_string());
            }
        }
    }
    for p in &args.peer {
        let v = read_json(p, "peer scores")?;
        scores.extend(strategies::scores(p, &v, true)?);
        sources.push(format!("{} (peer)", p.display()));
    }
    if !scores.is_empty() {
        strategies::section(&mut page, &sources, scores)?;
    }
    if !capture_files.is_empty() {
        captures::section(&mut page, &capture_files, &mut unreadable);
    }
    let figures = page.figures();
    let intro = format!(
        "Made by kw {} on {} from {}.",
        env!("CARGO_PKG_VERSION"),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        args.inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let html = page.finish(&args.title, &intro);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the report directory", args.out.display()))?;
    let index = args.out.join("index.html");
    let existed = index.exists();
    kw_core::files::write_atomic(&index, html.as_bytes(), kw_core::files::FileModes::get())
        .with_context(|| format!("{}: cannot write the report", index.display()))?;
    println!(
        "report: {} ({} figures{})",
        index.display(),
        figures,
        if existed {
            "; replaced the previous report"
        } else {
            ""
        }
    );
    if !unreadable.is_empty() {
        for why in &unreadable {
            eprintln!("kw report: error: left out {why}");
        }
        bail!(
            "{} of the inputs could not be read; the report holds the rest and says why",
            unreadable.len()
        );
    }
    Ok(())
}
