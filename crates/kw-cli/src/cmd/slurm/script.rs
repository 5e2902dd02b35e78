//! The two batch scripts `kw slurm` writes into the shared directory: the job array
//! (`kw-slurm-array.sh`, one task per shard, each running `kw slurm task`) and the merge job
//! (`kw-slurm-merge.sh`, running `kw slurm merge`), with the Slurm options mapped to
//! `#SBATCH` lines.

use super::manifest::{Manifest, SlurmOptions};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// The array script's file name.
pub const ARRAY_SCRIPT: &str = "kw-slurm-array.sh";
/// The merge script's file name.
pub const MERGE_SCRIPT: &str = "kw-slurm-merge.sh";
/// Where Slurm writes the jobs' output, in the shared directory.
pub const SLURM_LOGS: &str = "slurm-logs";

/// `text` quoted for a POSIX shell (single quotes).
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// An extra `#SBATCH` line as given (`--qos=high`, `#SBATCH --qos=high` or `qos=high`),
/// reduced to its option; a line break or an empty line is an error naming it.
pub fn sbatch_option(line: &str) -> Result<String> {
    let text = line.trim();
    let text = text.strip_prefix("#SBATCH").map_or(text, str::trim_start);
    if text.is_empty() || text.contains(['\n', '\r']) {
        bail!("--sbatch-line {line:?}: expected one Slurm option such as `--qos=high`");
    }
    let option = if text.starts_with('-') {
        text.to_string()
    } else {
        format!("--{text}")
    };
    // Options the run's mechanics rest on: the array's indexes are the shards, every task
    // one process on one node, the logs where the merge job says they are.
    let name = option
        .split(['=', ' '])
        .next()
        .unwrap_or_default()
        .to_string();
    const KW_SETS: [(&str, &str); 11] = [
        ("--array", "--tasks"),
        ("-a", "--tasks"),
        ("--output", "the logs' place in SHARED/slurm-logs"),
        ("-o", "the logs' place in SHARED/slurm-logs"),
        ("--wrap", "the array script"),
        ("--nodes", "one node per task"),
        ("-N", "one node per task"),
        ("--ntasks", "one process per task"),
        ("-n", "one process per task"),
        ("--job-name", "--job-name"),
        ("-J", "--job-name"),
    ];
    if let Some((_, by)) = KW_SETS.iter().find(|(o, _)| *o == name) {
        bail!(
            "--sbatch-line {line:?}: kw slurm sets `{name}` itself ({by}); a line of yours \
             would override it and break the run"
        );
    }
    Ok(option)
}

/// Checks a Slurm time limit (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`,
/// or `UNLIMITED`): digits, `:` and `-` only, so that nothing else reaches the script.
pub fn check_time(time: &str) -> Result<()> {
    let ok = time.eq_ignore_ascii_case("unlimited")
        || (!time.is_empty()
            && time
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':' || c == '-')
            && time.chars().next().is_some_and(|c| c.is_ascii_digit()));
    if !ok {
        bail!("--time {time:?}: expected a Slurm time such as 90, 2:00:00 or 1-12:00:00");
    }
    Ok(())
}

/// A partition, account or job name: a word Slurm takes (letters, digits, `-_.,`).
pub fn check_word(option: &str, value: &str) -> Result<()> {
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,".contains(c))
    {
        bail!("{option} {value:?}: expected letters, digits, `-`, `_`, `.` or `,`");
    }
    Ok(())
}

/// The `#SBATCH` options shared by both scripts (partition, account).
fn common_options(s: &SlurmOptions) -> Vec<String> {
    let mut o = Vec::new();
    if let Some(p) = &s.partition {
        o.push(format!("--partition={p}"));
    }
    if let Some(a) = &s.account {
        o.push(format!("--account={a}"));
    }
    o
}

/// The `#SBATCH` options of the array: one task per array index, its GPUs, CPUs and time
/// limit, and the user's extra lines last (so that they win over the ones written here).
pub fn array_options(m: &Manifest, shared: &Path) -> Vec<String> {
    let s = &m.slurm;
    let logs = shared.join(SLURM_LOGS);
    let mut o = vec![
        format!("--job-name={}", s.job_name),
        format!("--array=0-{}", m.tasks.saturating_sub(1)),
        "--nodes=1".into(),
        "--ntasks=1".into(),
        format!("--output={}/task-%A_%a.out", logs.display()),
    ];
    o.extend(common_options(s));
    if let Some(t) = &s.time {
        o.push(format!("--time={t}"));
    }
    if s.gpus_per_task > 0 {
        o.push(format!("--gres=gpu:{}", s.gpus_per_task));
    }
    if let Some(c) = s.cpus_per_task {
        o.push(format!("--cpus-per-task={c}"));
    }
    o.extend(s.extra.iter().cloned());
    o
}

/// The `#SBATCH` options of the merge job (no GPU; partition and account as the array's).
pub fn merge_options(m: &Manifest, shared: &Path) -> Vec<String> {
    let s = &m.slurm;
    let mut o = vec![
        format!("--job-name={}-merge", s.job_name),
        "--nodes=1".into(),
        "--ntasks=1".into(),
        format!(
            "--output={}/merge-%j.out",
            shared.join(SLURM_LOGS).display()
        ),
    ];
    o.extend(common_options(s));
    o.push("--time=30:00".into());
    o
}

fn script(what: &str, options: &[String], body: &str) -> String {
    let mut text = String::from("#!/bin/bash\n");
    text.push_str(&format!(
        "# Written by `kw slurm` (kernel-wisdom {}): {what}\n",
        env!("CARGO_PKG_VERSION")
    ));
    for o in options {
        text.push_str(&format!("#SBATCH {o}\n"));
    }
    text.push_str("set -euo pipefail\n");
    text.push_str(body);
    text
}

/// The job array's script: each task tunes its shard (`kw slurm task`).
pub fn array_script(m: &Manifest, shared: &Path) -> String {
    script(
        &format!(
            "{} array tasks, each tuning its shard of {} captures on the GPUs Slurm gives it.",
            m.tasks,
            m.captures.len()
        ),
        &array_options(m, shared),
        &format!(
            "# The shard comes from SLURM_ARRAY_TASK_ID; the number of shards from the manifest.\n\
             exec {} slurm task {}\n",
            shell_quote(&m.kw.display().to_string()),
            shell_quote(&shared.display().to_string())
        ),
    )
}

/// The merge job's script: merges the complete shards, names the others and fails when
/// there are any (`kw slurm merge`).
pub fn merge_script(m: &Manifest, shared: &Path) -> String {
    script(
        "merges the shards' wisdom; fails naming every shard that is missing or incomplete.",
        &merge_options(m, shared),
        &format!(
            "exec {} slurm merge {}\n",
            shell_quote(&m.kw.display().to_string()),
            shell_quote(&shared.display().to_string())
        ),
    )
}

/// Writes both scripts (executable) and the Slurm output directory; returns the scripts.
pub fn write_scripts(m: &Manifest, shared: &Path) -> Result<(PathBuf, PathBuf)> {
    use anyhow::Context;
    let modes = kw_core::files::FileModes::get();
    let logs = shared.join(SLURM_LOGS);
    modes
        .create_dir_all(&logs)
        .with_context(|| format!("creating {}", logs.display()))?;
    let exec = kw_core::files::FileModes {
        file: modes.file | ((modes.file & 0o444) >> 2),
        dir: modes.dir,
    };
    let array = shared.join(ARRAY_SCRIPT);
    let merge = shared.join(MERGE_SCRIPT);
    for (path, text) in [
        (&array, array_script(m, shared)),
        (&merge, merge_script(m, shared)),
    ] {
        kw_core::files::write_atomic(path, text.as_bytes(), exec)
            .with_context(|| format!("{}: cannot write the batch script", path.display()))?;
    }
    Ok((array, merge))
}

#[cfg(test)]
mod tests {
    use super::super::manifest::sample;
    use super::*;

    #[test]
    fn options_become_sbatch_lines() {
        let mut m = sample(3, &["/c/a", "/c/b", "/c/c", "/c/d"]);
        m.slurm.partition = Some("gpu".into());
        m.slurm.account = Some("proj42".into());
        m.slurm.time = Some("2:00:00".into());
        m.slurm.gpus_per_task = 4;
        m.slurm.cpus_per_task = Some(16);
        m.slurm.extra = vec!["--qos=high".into(), "--constraint=a100".into()];
        let shared = Path::new("/scratch/run-1");
        let text = array_script(&m, shared);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert_eq!(
            lines,
            [
                "#SBATCH --job-name=kw-tune",
                "#SBATCH --array=0-2",
                "#SBATCH --nodes=1",
                "#SBATCH --ntasks=1",
                "#SBATCH --output=/scratch/run-1/slurm-logs/task-%A_%a.out",
                "#SBATCH --partition=gpu",
                "#SBATCH --account=proj42",
                "#SBATCH --time=2:00:00",
                "#SBATCH --gres=gpu:4",
                "#SBATCH --cpus-per-task=16",
                "#SBATCH --qos=high",
                "#SBATCH --constraint=a100",
            ]
        );
        assert!(
            text.ends_with("exec /opt/kw/bin/kw slurm task /scratch/run-1\n"),
            "{text}"
        );
        // The merge job: same partition and account, no GPU, no extra lines.
        let merge = merge_script(&m, shared);
        assert!(merge.contains("#SBATCH --job-name=kw-tune-merge\n"));
        assert!(merge.contains("#SBATCH --partition=gpu\n#SBATCH --account=proj42\n"));
        assert!(!merge.contains("gres") && !merge.contains("qos"), "{merge}");
        assert!(merge.ends_with("exec /opt/kw/bin/kw slurm merge /scratch/run-1\n"));
        // No GPUs asked for: no gres line.
        m.slurm.gpus_per_task = 0;
        assert!(!array_script(&m, shared).contains("--gres"));
    }

    #[test]
    fn user_input_cannot_break_the_script() {
        assert_eq!(sbatch_option("#SBATCH --qos=high").unwrap(), "--qos=high");
        assert_eq!(sbatch_option("qos=high").unwrap(), "--qos=high");
        assert_eq!(sbatch_option(" -C a100 ").unwrap(), "-C a100");
        assert!(sbatch_option("--qos=x\nrm -rf /").is_err());
        assert!(sbatch_option("#SBATCH").is_err());
        // What the run rests on is kw slurm's own: refused, however written.
        for line in [
            "--array=0-9",
            "array=1",
            "-a 3",
            "--output=/tmp/x",
            "-o x",
            "--wrap=ls",
            "--nodes=2",
            "-N 2",
            "ntasks=4",
            "-J other",
        ] {
            let e = sbatch_option(line).unwrap_err().to_string();
            assert!(e.contains("kw slurm sets"), "{line}: {e}");
        }
        assert_eq!(
            sbatch_option("--ntasks-per-node=1").unwrap(),
            "--ntasks-per-node=1"
        );
        assert_eq!(
            sbatch_option("--gres=gpu:a100:4").unwrap(),
            "--gres=gpu:a100:4"
        );
        for good in ["90", "2:00:00", "1-12:00", "UNLIMITED"] {
            check_time(good).unwrap();
        }
        for bad in ["", "2h", "1:00; reboot", "-5"] {
            assert!(check_time(bad).is_err(), "{bad}");
        }
        check_word("--partition", "gpu-a100").unwrap();
        assert!(check_word("--partition", "gpu a100").is_err());
        assert!(check_word("--account", "$(id)").is_err());
        assert_eq!(shell_quote("/a/b-c"), "/a/b-c");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
