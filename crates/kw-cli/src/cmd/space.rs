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
    #[command(
        after_help = "Examples:\n  kw space stats captures/vector_add_4096.kwcap\n  \
                            kw space stats gemm_A100.json.gz --restrictions-json gemm_T1.json"
    )]
    Stats {
        /// A Kernel Tuner cache file (.json or .json.gz), a T4 results file (the values its
        /// configurations hold), a T1 specification file, or a
        /// capture (.kwcap: the space `kw tune` searches for it, on the device it was made on,
        /// at its problem size).
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
            if spec.extension().is_some_and(|e| e == kw_capture::EXTENSION) {
                return capture_stats(&spec, &restrictions, restrictions_json.is_some(), started);
            }
            let mut spec_data = load_space_spec(&spec)?;
            for note in &spec_data.notes {
                eprintln!("kw space stats: {}", kw_core::diag::one_line(note, 4000));
            }
            for (i, text) in restrictions.iter().enumerate() {
                let e = Expr::parse(text).with_context(|| format!("--restriction #{}", i + 1))?;
                spec_data.restrictions.push(e);
            }
            if let Some(path) = restrictions_json {
                let read = load_restrictions(&path, None)?;
                for note in &read.notes {
                    eprintln!("kw space stats: {}", kw_core::diag::one_line(note, 4000));
                }
                spec_data.restrictions.extend(read.exprs);
            }
            // Conditions over the device (`device.max_threads_per_block`) cannot be counted
            // here, where there is no device: said with what can count them.
            let uses_device = spec_data
                .restrictions
                .iter()
                .any(|e| e.to_string().contains("device."));
            let space =
                TuningSpace::new(spec_data.params, spec_data.restrictions).with_context(|| {
                    let hint = if uses_device {
                        " (its conditions name `device.` attributes, which need a device: \
                         `kw space stats` counts a T1 or cache file without one; `kw tune` \
                         evaluates them on its device, and `kw space stats CAPTURE` on the \
                         capture's)"
                    } else {
                        ""
                    };
                    format!("building the space of {}{hint}", spec.display())
                })?;
            let seconds = started.elapsed().as_secs_f64();
            // Counts may exceed 64 bits: print them as exact JSON integers.
            println!(
                "{{\"parameters\": {}, \"product\": {}, \"valid\": {}, \"seconds\": {:.6}}}",
                space.params().len(),
                product_text(&space),
                space.len(),
                seconds
            );
            Ok(())
        }
    }
}

/// The product of the parameters' value counts as JSON: an exact integer, or past 128 bits
/// (where [`TuningSpace::product`] saturates) a float of its order (`5.153775207320113e47`),
/// never the saturated bound as if it were the count.
fn product_text(space: &TuningSpace) -> String {
    match space.product() {
        u128::MAX => {
            let approx: f64 = space
                .params()
                .iter()
                .map(|p| p.values.len() as f64)
                .product();
            format!("{approx:e}")
        }
        exact => exact.to_string(),
    }
}

/// `kw space stats CAPTURE`: the space `kw tune` searches for a capture (extra restrictions
/// are not taken: the capture's definition holds its own).
fn capture_stats(
    path: &std::path::Path,
    restrictions: &[String],
    restrictions_json: bool,
    started: Instant,
) -> Result<()> {
    if !restrictions.is_empty() || restrictions_json {
        anyhow::bail!(
            "{}: a capture's space is its definition's; --restriction and --restrictions-json \
             are for Kernel Tuner and T1 files",
            path.display()
        );
    }
    let capture = kw_capture::Capture::open(path)?;
    let meta: kw_core::capture_meta::CaptureMetadata = capture.metadata_as()?;
    // The metadata's and the definition's versions, as `kw tune` checks them.
    meta.check_version()
        .map_err(|m| anyhow::anyhow!("{}: {m}", path.display()))?;
    let space = kw_replay::launch_space::space_of(&meta, &meta.device)
        .with_context(|| format!("{}: building the space", path.display()))?;
    println!(
        "{{\"parameters\": {}, \"product\": {}, \"valid\": {}, \"seconds\": {:.6}, \"problem_size\": {:?}, \"device\": {}}}",
        space.params().len(),
        product_text(&space),
        space.len(),
        started.elapsed().as_secs_f64(),
        meta.problem_size,
        serde_json::to_string(&meta.device.name)?
    );
    Ok(())
}
