//! `kw tune`'s priors: results of the same kernel elsewhere that seed the search
//! ([`kw_tune::prior`]): the files of `--prior`, and by default the wisdom of the same
//! tuning key in the wisdom search path and `--wisdom-dir` (`--no-prior` turns priors off).

use super::args::TuneArgs;
use anyhow::{Context, Result};
use kw_core::space::TuningSpace;
use kw_core::wisdom::{find_wisdom_files, WisdomFile};
use kw_tune::prior::{self, PriorParams, PriorSource, Seeding};

/// What seeds the search of `tuning_key` (kernel `kernel_name`) in `space` on the device
/// named `device` at `problem_size`; says on stderr what was used (and which sources record
/// another kernel, [`prior::kernel_notes`]). The files named with `--prior` come first,
/// then the wisdom found; each group ordered with the records of that device first, nearest
/// problem size first ([`prior::nearest_first`]).
pub(super) fn seeding(
    args: &TuneArgs,
    tuning_key: &str,
    kernel_name: &str,
    space: &TuningSpace,
    device: &str,
    problem_size: &[i64],
) -> Result<Seeding> {
    if args.no_prior {
        return Ok(Seeding::default());
    }
    let settings = match &args.prior_settings {
        Some(text) => Some(
            PriorParams::parse(text)
                .map_err(|m| anyhow::anyhow!("--prior-settings {text}: {m}"))?,
        ),
        None => None,
    };
    // The files named with --prior first, in their order; then the wisdom found, ordered.
    let mut given: Vec<PriorSource> = Vec::new();
    for file in &args.prior {
        given.extend(prior::load(file).context("reading a prior (--prior)")?);
    }
    let mut sources: Vec<PriorSource> = Vec::new();
    let mut dirs = kernel_wisdom::search_path(None);
    dirs.push(args.wisdom_dir()?);
    let (found, errors) = find_wisdom_files(tuning_key, &dirs);
    for e in errors {
        match e {
            // The record is used without that alternate; the file without that record.
            kw_core::wisdom::WisdomError::AlternateLeftOut { .. }
            | kw_core::wisdom::WisdomError::RecordLeftOut { .. } => {
                eprintln!("kw tune: prior: {e}")
            }
            e => eprintln!("kw tune: prior: wisdom not used: {e}"),
        }
    }
    for (path, file) in &found {
        sources.extend(prior::wisdom_sources(path, file));
    }
    // The records shipped with the library, for a library kernel's capture: an application
    // selects from them even with no wisdom file on disk.
    if let Some(json) = tuning_key
        .strip_prefix("kw_")
        .and_then(kernel_wisdom::library::defs::shipped_wisdom)
    {
        let label = std::path::PathBuf::from(format!("shipped:{tuning_key}.json"));
        match WisdomFile::parse(&label, json.as_bytes()) {
            Ok(file) if file.tuning_key == tuning_key => {
                sources.extend(prior::wisdom_sources(&label, &file));
            }
            Ok(_) => {}
            Err(e) => eprintln!("kw tune: prior: shipped wisdom not used: {e}"),
        }
    }
    // Each group ordered alike (a wisdom file given with --prior is many sources too).
    prior::nearest_first(&mut given, device, problem_size);
    prior::nearest_first(&mut sources, device, problem_size);
    given.append(&mut sources);
    let sources = given;
    // The same records reached twice (a file given with --prior that is also on the
    // search path, the shipped file copied to disk) count once.
    let mut seen: Vec<&PriorSource> = Vec::new();
    let sources: Vec<PriorSource> = sources
        .iter()
        .filter(|s| {
            let new = !seen.iter().any(|t| t.results == s.results);
            if new {
                seen.push(s);
            }
            new
        })
        .cloned()
        .collect();
    if sources.is_empty() {
        if let Some(text) = &args.prior_settings {
            eprintln!("kw tune: prior: no earlier results of {tuning_key} found; --prior-settings {text} has nothing to seed");
        }
        return Ok(Seeding::default());
    }
    let params = settings.unwrap_or_else(|| PriorParams::for_device(&sources, device));
    let mapped = prior::map(&sources, space, params);
    eprintln!(
        "kw tune: prior: {} of {} earlier results ({} source(s)) match this space; {} configuration(s) evaluated first (--no-prior turns this off)",
        mapped.matched,
        mapped.total,
        sources.len(),
        mapped.points.len()
    );
    if let (prior::PriorShare::Trust(t), false) = (params.share, mapped.points.is_empty()) {
        if let Some(words) = t.climb_words() {
            eprintln!("kw tune: prior: {words}");
        }
    }
    for note in prior::kernel_notes(&sources, kernel_name)
        .iter()
        .chain(&mapped.notes)
    {
        eprintln!(
            "kw tune: prior: note: {}",
            kw_core::diag::one_line(note, 4000)
        );
    }
    Ok(mapped.seeding())
}
