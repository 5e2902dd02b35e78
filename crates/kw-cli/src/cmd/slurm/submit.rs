//! Submission through `sbatch --parsable`: the array (all tasks, or only those named), then
//! the merge job with `--dependency=afterany:<array>` (with `afterok`, one failed task would
//! leave the merge pending for ever; the merge itself says what is missing).

use anyhow::{bail, Result};
use std::path::Path;
use std::process::Command;

/// The `sbatch` to run: `KW_SBATCH` (a site wrapper, or a test's), else `sbatch` on `PATH`.
fn sbatch() -> String {
    std::env::var("KW_SBATCH")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "sbatch".into())
}

/// The job id in `sbatch --parsable`'s output (`12345` or `12345;cluster`).
pub fn parse_job_id(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

/// Runs `sbatch --parsable ARGS... SCRIPT` and returns the job id; an error names the whole
/// command and carries sbatch's standard error.
pub fn sbatch_submit(args: &[String], script: &Path) -> Result<String> {
    let program = sbatch();
    let mut words = vec!["--parsable".to_string()];
    words.extend(args.iter().cloned());
    words.push(script.display().to_string());
    let shown = format!("{program} {}", words.join(" "));
    let out = match Command::new(&program).args(&words).output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "`{shown}`: {program} not found (is this a Slurm login node? `kw slurm` \
             without --submit writes the scripts only)"
        ),
        Err(e) => bail!("`{shown}`: cannot run it: {e}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("`{shown}` was refused ({}): {}", out.status, stderr.trim());
    }
    parse_job_id(&stdout).ok_or_else(|| {
        anyhow::anyhow!(
            "`{shown}`: no job id in its output ({:?}; standard error: {})",
            stdout.trim(),
            stderr.trim()
        )
    })
}

/// The `--array` value for some task ids: `1,4,5`.
pub fn array_list(tasks: &[usize]) -> String {
    tasks
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Submits the array (`only`: these tasks instead of the script's `--array`) and the merge
/// job after it; returns (array job, merge job).
pub fn submit_run(
    array_script: &Path,
    merge_script: &Path,
    only: Option<&[usize]>,
) -> Result<(String, String)> {
    let array_args = match only {
        Some(tasks) => vec![format!("--array={}", array_list(tasks))],
        None => Vec::new(),
    };
    let array = sbatch_submit(&array_args, array_script)?;
    let merge =
        sbatch_submit(&[format!("--dependency=afterany:{array}")], merge_script).map_err(|e| {
            e.context(format!(
                "the array job {array} was submitted, its merge job was not"
            ))
        })?;
    Ok((array, merge))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_read_from_parsable_output() {
        assert_eq!(parse_job_id("12345\n").as_deref(), Some("12345"));
        assert_eq!(parse_job_id("\n678;cluster2\n").as_deref(), Some("678"));
        assert_eq!(parse_job_id("Submitted batch job 5"), None);
        assert_eq!(parse_job_id(""), None);
        assert_eq!(array_list(&[1, 4]), "1,4");
    }
}
