//! `kw capture ...`: list, show and verify capture files.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use kw_capture::{Capture, EXTENSION};
use kw_core::config::Config;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum CaptureCmd {
    /// One line per capture in DIR: file, tuning key, problem size, date, compressed and raw size.
    #[command(after_help = "Examples:\n  kw capture ls\n  kw capture ls /scratch/captures")]
    Ls {
        /// Directory holding `.kwcap` files (default: `KW_CAPTURE_DIR` when set, else
        /// `captures`, where applications write them).
        dir: Option<PathBuf>,
    },
    /// Kernel, problem size, device, date, the tuning space and the configuration launched,
    /// the arguments and the buffers of one capture.
    #[command(
        after_help = "Examples:\n  kw capture show captures/vector_add_4096.kwcap\n  \
                            kw capture show captures/vector_add_4096.kwcap --json | jq .args"
    )]
    Show {
        /// A `.kwcap` file.
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum of each file; exits non-zero if any file fails.
    #[command(after_help = "Examples:\n  kw capture verify captures/*.kwcap")]
    Verify {
        /// `.kwcap` files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Turn the benchmark a T1 file describes into an ordinary capture: its kernel, its
    /// tuning space, its arguments filled as the file says, launched once with the `Default`
    /// configuration on a device of its language, whose outputs become the reference.
    #[command(
        after_help = "Examples:\n  kw capture from-t1 gemm_T1.json -o captures/gemm.kwcap\n  \
                            kw tune captures/gemm.kwcap --budget 200"
    )]
    FromT1 {
        /// The T1 file (`KernelFile` and `DataSource` paths are relative to it).
        file: PathBuf,
        /// The capture to write (`.kwcap`).
        #[arg(short, long)]
        out: PathBuf,
        /// Device: an index or a name substring (default: `KW_DEVICE`, else the first device
        /// of the file's language).
        #[arg(long)]
        device: Option<String>,
        /// The configuration whose output is the reference (`name=value,...`; parameters not
        /// named keep their `Default`), instead of the `Default` configuration. Outputs given
        /// by the file's `ReferenceArguments` are the reference either way.
        #[arg(long, value_name = "NAME=VALUE,...")]
        reference_config: Option<String>,
    },
}

pub fn run(cmd: CaptureCmd) -> Result<()> {
    match cmd {
        CaptureCmd::Ls { dir } => match dir {
            Some(dir) => ls(&dir, false),
            None => ls(&default_capture_dir(), true),
        },
        CaptureCmd::Show { file, json } => show(&file, json),
        CaptureCmd::Verify { files } => verify(&files),
        CaptureCmd::FromT1 {
            file,
            out,
            device,
            reference_config,
        } => {
            let bench = kw_core::kernel_tuner::T1Benchmark::load(&file)?;
            // The child of `capture_t1_in_child` is handed the parent's configuration whole.
            let reference = match std::env::var(T1_REFERENCE_ENV) {
                Ok(json) if std::env::var_os(T1_CHILD_ENV).is_some() => Some(
                    serde_json::from_str::<Config>(&json)
                        .with_context(|| format!("{T1_REFERENCE_ENV}: {json}"))?,
                ),
                _ => reference_config
                    .as_deref()
                    .map(|t| parse_config(&bench.def, t))
                    .transpose()
                    .with_context(|| format!("{}: --reference-config", file.display()))?,
            };
            let path = capture_t1(&file, &bench, &out, device.as_deref(), reference.as_ref())?;
            println!("{}", path.display());
            Ok(())
        }
    }
}

/// A configuration of `def` from `name=value,...`: parameters not named keep their default;
/// an unknown name or a value the parameter does not have is an error naming both.
pub fn parse_config(def: &kw_core::kernel_def::KernelDef, text: &str) -> Result<Config> {
    let mut config = def.default_config();
    let mut given: Vec<&str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = part.split_once('=') else {
            bail!("`{part}` is not NAME=VALUE");
        };
        let (name, value) = (name.trim(), value.trim());
        if given.contains(&name) {
            bail!("`{name}` is given twice");
        }
        given.push(name);
        let Some(p) = def.parameters.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = def.parameters.iter().map(|p| p.name.as_str()).collect();
            bail!("no parameter `{name}` (parameters: {})", names.join(", "));
        };
        let Some(v) = p
            .values
            .iter()
            .find(|v| v.python_str() == value || v.to_string() == value)
        else {
            let values: Vec<String> = p.values.iter().map(|v| v.python_str()).collect();
            bail!(
                "`{name}` has no value {value} (values: {})",
                values.join(", ")
            );
        };
        config.set(name, v.clone());
    }
    Ok(config)
}

/// Set in the child process that launches a T1 file's reference configuration.
const T1_CHILD_ENV: &str = "KW_T1_REFERENCE_CHILD";
/// The reference configuration handed to that child, as JSON (every value type exactly).
const T1_REFERENCE_ENV: &str = "KW_T1_REFERENCE_CONFIG";

/// Writes the capture of `bench`, loaded from the T1 file `file`, to `out`; the reference
/// output is `reference`'s (the `Default` configuration's when `None`), except where the file
/// gives `ReferenceArguments`. The reference launch runs in a child process (`kw capture
/// from-t1` again): a kernel that reads or writes out of bounds kills the process that runs it
/// on a CPU device, and that must not be `kw`'s own (a published file at another size can).
pub fn capture_t1(
    file: &Path,
    bench: &kw_core::kernel_tuner::T1Benchmark,
    out: &Path,
    device: Option<&str>,
    reference: Option<&Config>,
) -> Result<PathBuf> {
    let child = std::env::var_os(T1_CHILD_ENV).is_some();
    if !child {
        for note in &bench.notes {
            eprintln!(
                "kw capture from-t1: {}",
                kw_core::diag::one_line(note, 4000)
            );
        }
    }
    if out.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
        bail!(
            "{}: the capture's name must end in .{EXTENSION}",
            out.display()
        );
    }
    if out.exists() {
        bail!(
            "{}: exists; not overwriting it (remove it or choose another name)",
            out.display()
        );
    }
    let dir = kw_core::files::parent_dir(out);
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !child {
        // The capture writer names the file by the sanitized stem (`gemm.v2` -> `gemm_v2`):
        // said before it writes (only the path printed at the end told of it).
        let sane = kw_capture::sanitize_stem(&stem);
        let written = dir.join(format!("{sane}.{EXTENSION}"));
        if written.exists() {
            bail!(
                "{}: exists (`{}` is written under this name); not overwriting it (remove it \
                 or choose another name)",
                written.display(),
                out.display()
            );
        }
        if sane != stem {
            eprintln!(
                "kw capture from-t1: note: writing {} for {} (a capture's name holds only \
                 ASCII letters, digits, `_`, `-`, `+` and `=` before .{EXTENSION})",
                written.display(),
                out.display()
            );
        }
        return capture_t1_in_child(file, out, &written, device, reference);
    }
    let device = super::device_choice::open_for(bench.def.backend, device)?;
    let data = kw_capture::record::LaunchData {
        args: &bench.inputs,
        symbols: &bench.symbols,
        references: &bench.references,
    };
    let written = kw_capture::record::capture_launch_with(
        dir,
        &stem,
        &bench.def,
        reference,
        device.as_ref(),
        data,
    )
    .with_context(|| match reference {
        Some(_) => format!("{}: the reference configuration's launch", file.display()),
        None => format!("{}: the Default configuration's launch", file.display()),
    })?;
    Ok(written)
}

/// [`capture_t1`] in a child process: `kw capture from-t1 FILE -o OUT` with [`T1_CHILD_ENV`]
/// set, which writes `written` (OUT as the capture writer names it); its death by a signal
/// is an error that says what it means.
fn capture_t1_in_child(
    file: &Path,
    out: &Path,
    written: &Path,
    device: Option<&str>,
    reference: Option<&Config>,
) -> Result<PathBuf> {
    let exe =
        std::env::current_exe().context("finding the kw binary to run the reference launch")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["capture", "from-t1", "--out"])
        .arg(out)
        .env(T1_CHILD_ENV, "1")
        .env_remove(T1_REFERENCE_ENV)
        .stdout(std::process::Stdio::null());
    if let Some(d) = device {
        cmd.args(["--device", d]);
    }
    if let Some(c) = reference {
        cmd.env(T1_REFERENCE_ENV, serde_json::to_string(c)?);
    }
    kw_core::child_env::restore_icd_env(&mut cmd);
    cmd.arg("--").arg(file);
    let what = match reference {
        Some(c) => format!("the reference configuration {{{c}}}"),
        None => "the Default configuration".to_string(),
    };
    let status = cmd
        .status()
        .with_context(|| format!("{}: running {what}'s launch", file.display()))?;
    if status.success() && written.is_file() {
        return Ok(written.to_path_buf());
    }
    let _ = std::fs::remove_file(written);
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        // SIGILL, SIGBUS, SIGFPE, SIGSEGV: the kernel's own doing.
        let why = match signal {
            11 => {
                ", a segmentation fault: the kernel reads or writes out of bounds at this \
                   ProblemSize, or uses more of an argument than the file declares (its `Size`)"
            }
            4 | 7 | 8 => {
                ": the kernel faulted (out-of-bounds access, a bad instruction or an \
                          integer division by zero)"
            }
            _ => "",
        };
        bail!(
            "{}: {what}'s launch killed the process that ran it (signal {signal}{why}); no \
             capture was written",
            file.display()
        );
    }
    bail!(
        "{}: {what}'s launch failed ({status}; its messages above); no capture was written",
        file.display()
    )
}

/// Where the kernel's name is in capture metadata (current form first, older forms after).
const KERNEL_NAME_PATHS: &[&str] = &["kernel.kernel_name", "kernel.name", "kernel_name"];

/// The first of `paths` (dot-separated) present in the metadata.
fn lookup<'a>(meta: &'a Value, paths: &[&str]) -> Option<&'a Value> {
    paths.iter().find_map(|p| {
        p.split('.')
            .try_fold(meta, |v, k| v.get(k))
            .filter(|v| !v.is_null())
    })
}

fn text(v: Option<&Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.iter().all(|x| x.is_number()) => a
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("x"),
        Some(other) => other.to_string(),
    }
}

pub(crate) fn tuning_key(meta: &Value) -> String {
    text(lookup(
        meta,
        &[
            "kernel.tuning_key",
            "tuning_key",
            "kernel_name",
            "kernel.name",
        ],
    ))
}

pub(crate) fn problem_size(meta: &Value) -> String {
    text(lookup(meta, &["problem_size", "kernel.problem_size"]))
}

pub(crate) fn device(meta: &Value) -> String {
    text(lookup(meta, &["device.name", "device"]))
}

/// `provenance.date` (or `date`) from the metadata, else the file's modification time (UTC).
pub(crate) fn date(meta: &Value, file: &Path) -> String {
    if let Some(d) = lookup(meta, &["provenance.date", "date"]) {
        return text(Some(d));
    }
    std::fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| format_utc(d.as_secs()))
        .unwrap_or_else(|| "-".to_string())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch.
fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

pub(crate) fn human(bytes: u64) -> String {
    kw_core::diag::bytes(bytes)
}

/// Where applications write captures: `KW_CAPTURE_DIR` when set (and not empty), else
/// `captures` in the current directory.
pub(crate) fn default_capture_dir() -> PathBuf {
    std::env::var_os(kernel_wisdom::CAPTURE_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(
            || PathBuf::from(kernel_wisdom::DEFAULT_CAPTURE_DIR),
            PathBuf::from,
        )
}

/// Lists the captures in `dir`; `by_default`: `dir` was not given (the error then says where
/// it came from).
fn ls(dir: &Path, by_default: bool) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if by_default && e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{}: no such directory (the default capture directory: {}); give the directory \
             as `kw capture ls DIR`, or capture first (KW_CAPTURE=KERNEL ./app)",
            dir.display(),
            if std::env::var_os(kernel_wisdom::CAPTURE_DIR_ENV).is_some_and(|v| !v.is_empty()) {
                "KW_CAPTURE_DIR"
            } else {
                "`captures` in the current directory, KW_CAPTURE_DIR unset or empty"
            }
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("{}: listing the directory", dir.display()))
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            !name.starts_with('.') && p.extension().is_some_and(|e| e == EXTENSION)
        })
        .collect();
    files.sort();
    if files.is_empty() {
        println!("no capture files (*.{EXTENSION}) in {}", dir.display());
        return Ok(());
    }
    let mut unreadable = 0usize;
    let rows: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match Capture::open(f) {
                Ok(c) => vec![
                    name,
                    tuning_key(c.metadata()),
                    problem_size(c.metadata()),
                    date(c.metadata(), f),
                    human(c.file_len()),
                    human(c.raw_len()),
                ],
                Err(e) => {
                    unreadable += 1;
                    vec![name, format!("UNREADABLE: {e}")]
                }
            }
        })
        .collect();
    super::table::print(
        &[
            "file",
            "tuning key",
            "problem size",
            "date",
            "compressed",
            "raw",
        ],
        &rows,
    );
    if unreadable > 0 {
        bail!(
            "{unreadable} of {} capture files in {} cannot be read (UNREADABLE above)",
            rows.len(),
            dir.display()
        );
    }
    Ok(())
}

fn summary(c: &Capture) -> Value {
    let meta = c.metadata();
    let buffers: Vec<Value> = c
        .buffers()
        .map(|b| {
            json!({
                "name": b.name, "elem_type": b.elem_type, "raw_bytes": b.raw_len,
                "compressed_bytes": b.compressed_len, "frame": b.frame, "shared": b.shared,
            })
        })
        .collect();
    json!({
        "file": c.path().display().to_string(),
        "format_version": c.header().version,
        "writer": c.header().writer,
        "tuning_key": tuning_key(meta),
        "kernel_name": lookup(meta, KERNEL_NAME_PATHS),
        "problem_size": lookup(meta, &["problem_size", "kernel.problem_size"]),
        "device": lookup(meta, &["device"]),
        "date": date(meta, c.path()),
        "args": lookup(meta, &["args", "arguments"]),
        "buffers": buffers,
        "file_bytes": c.file_len(),
        "compressed_bytes": c.compressed_len(),
        "raw_bytes": c.raw_len(),
        "metadata": meta,
    })
}

fn show(file: &Path, as_json: bool) -> Result<()> {
    let c = Capture::open(file)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&summary(&c))?);
        return Ok(());
    }
    let meta = c.metadata();
    println!("file:         {}", c.path().display());
    println!(
        "format:       version {} ({})",
        c.header().version,
        c.header().writer
    );
    // What the file says is shown without its control characters (never raw to a terminal).
    let shown = |s: String| super::table::printable(&s);
    println!("tuning key:   {}", shown(tuning_key(meta)));
    println!(
        "kernel:       {}",
        shown(text(lookup(meta, KERNEL_NAME_PATHS)))
    );
    println!("problem size: {}", shown(problem_size(meta)));
    println!("device:       {}", shown(device(meta)));
    println!("date:         {}", shown(date(meta, file)));
    println!(
        "size:         {} in the file, {} compressed, {} raw",
        human(c.file_len()),
        human(c.compressed_len()),
        human(c.raw_len())
    );
    match c.metadata_as::<kw_core::capture_meta::CaptureMetadata>() {
        Ok(m) => {
            // Shown as far as it reads; what `kw tune` would refuse is said first.
            if let Err(why) = m.check_version() {
                println!("note:         {} (`kw tune` refuses it)", shown(why));
            }
            super::capture_tables::print(&m)
        }
        // An older or foreign metadata layout: the arguments as JSON, one per line.
        Err(_) => {
            if let Some(Value::Array(args)) = lookup(meta, &["args", "arguments"]) {
                println!("arguments:");
                for (i, a) in args.iter().enumerate() {
                    println!("  {i:>3}: {}", serde_json::to_string(a)?);
                }
            }
        }
    }
    println!("buffers:");
    for b in c.buffers() {
        println!(
            "  {:<24} {:<6} {:>11} raw {:>11} compressed{}",
            super::table::printable(b.name),
            super::table::printable(b.elem_type),
            human(b.raw_len),
            human(b.compressed_len),
            if b.shared { "  (shared frame)" } else { "" }
        );
    }
    Ok(())
}

fn verify(files: &[PathBuf]) -> Result<()> {
    let mut failed = 0;
    for f in files {
        match Capture::open(f).and_then(|c| c.verify().map(|s| (c, s))) {
            Ok((c, s)) => println!(
                "ok      {} ({} buffers, {} frames, {} chunks, {} raw)",
                f.display(),
                c.buffers().count(),
                s.frames,
                s.chunks,
                human(s.raw_bytes)
            ),
            Err(e) => {
                failed += 1;
                println!("FAILED  {e}");
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} capture files failed verification",
            files.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn metadata_lookup() {
        let m = json!({"kernel": {"name": "mm", "tuning_key": "mm_f32"}, "problem_size": [4, 5, 1], "device": {"name": "H100"}});
        assert_eq!(tuning_key(&m), "mm_f32");
        assert_eq!(problem_size(&m), "4x5x1");
        assert_eq!(device(&m), "H100");
        assert_eq!(tuning_key(&json!({})), "-");
        // Captures written by this version keep the name in the definition: `kernel.kernel_name`.
        let current = json!({"kernel": {"kernel_name": "vector_add", "tuning_key": "va"}});
        assert_eq!(text(lookup(&current, KERNEL_NAME_PATHS)), "vector_add");
        assert_eq!(text(lookup(&m, KERNEL_NAME_PATHS)), "mm");
    }
}
