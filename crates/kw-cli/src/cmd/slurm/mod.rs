//! `kw slurm`: tuning on a Slurm cluster. `kw slurm CAPTURES --out SHARED --tasks N` writes a
//! manifest ([`manifest`]), a job-array script and a merge script ([`script`]) into the
//! shared directory, and with `--submit` submits them through `sbatch` ([`submit`]): each
//! array task tunes its shard of the captures ([`task`], [`shards`]) and the merge job, which
//! depends on the array with `afterany`, merges the complete shards and names the others
//! ([`merge`]). `kw slurm --resubmit-missing SHARED` submits only the tasks whose shards
//! are missing or incomplete, and a new merge job ([`time`]: the warning when a task may
//! outrun its time limit). No scheduler of our own: Slurm places the
//! tasks; `docs/cluster.md` is the user's guide.

mod manifest;
mod merge;
mod script;
mod shards;
mod submit;
mod task;
mod time;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use manifest::{Manifest, SlurmOptions, MANIFEST_FORMAT, MANIFEST_VERSION};
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SlurmArgs {
    #[command(subcommand)]
    cmd: Option<SlurmCmd>,
    /// Capture files (.kwcap), or directories whose .kwcap files are all tuned. The
    /// compute nodes must see them at the same (absolute) paths.
    captures: Vec<PathBuf>,
    /// The shared directory (seen by every node at the same path): the manifest, the batch
    /// scripts, each task's shard, Slurm's output and the merged wisdom (`wisdom/`).
    #[arg(long, value_name = "SHARED_DIR")]
    out: Option<PathBuf>,
    /// Array tasks: the captures are cut into this many shards (capture j, in sorted order,
    /// goes to task j mod N).
    #[arg(long)]
    tasks: Option<usize>,
    /// Slurm partition (`#SBATCH --partition`), of the array and the merge job.
    #[arg(long)]
    partition: Option<String>,
    /// Slurm account (`#SBATCH --account`), of the array and the merge job.
    #[arg(long)]
    account: Option<String>,
    /// Time limit of each array task, in Slurm's format (`90`, `2:00:00`, `1-00:00:00`).
    #[arg(long)]
    time: Option<String>,
    /// GPUs of each array task (`#SBATCH --gres=gpu:N`; 0: ask for none).
    #[arg(long, default_value_t = 1)]
    gpus_per_task: u32,
    /// CPUs of each array task (`#SBATCH --cpus-per-task`); kw tune compiles on all but one.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    cpus_per_task: Option<u32>,
    /// Another `#SBATCH` line of the array script, e.g. `--qos=high` or `--constraint=a100`
    /// (repeatable; written last, so it wins over the lines kw writes).
    #[arg(
        long = "sbatch-line",
        value_name = "OPTION",
        allow_hyphen_values = true
    )]
    sbatch_lines: Vec<String>,
    /// The array's job name (the merge job's is this with `-merge`).
    #[arg(long, default_value = "kw-tune")]
    job_name: String,
    /// The search strategy of every task (as `kw tune --strategy`).
    #[arg(long)]
    strategy: Option<String>,
    /// Evaluations per capture (as `kw tune --budget`).
    #[arg(long)]
    budget: Option<u64>,
    /// The `kw` binary the jobs run (default: this one); the nodes must see it.
    #[arg(long)]
    kw: Option<PathBuf>,
    /// Submit the array and its merge job through `sbatch`.
    #[arg(long)]
    submit: bool,
    /// Start over in a shared directory that holds an earlier run (its shards and merged
    /// wisdom are removed).
    #[arg(long)]
    force: bool,
    /// Submit again only the tasks whose shards are missing or incomplete in SHARED_DIR,
    /// and a new merge job after them.
    #[arg(long, value_name = "SHARED_DIR", conflicts_with_all = ["captures", "out", "tasks", "force"])]
    resubmit_missing: Option<PathBuf>,
    /// More `kw tune` options for every task, after `--` (e.g. `-- --time 20m --no-prior`).
    #[arg(last = true, value_name = "KW_TUNE_OPTIONS")]
    tune_args: Vec<String>,
}

#[derive(Subcommand)]
enum SlurmCmd {
    /// Run one array task: tune the shard of SLURM_ARRAY_TASK_ID (or --task-id) into
    /// `SHARED_DIR/shards/<task>/` and mark it complete (what the array script runs).
    Task {
        /// The shared directory of `kw slurm --out`.
        shared: PathBuf,
        /// The task (shard) to run, instead of SLURM_ARRAY_TASK_ID (to run one by hand).
        #[arg(long)]
        task_id: Option<usize>,
    },
    /// Merge the complete shards into SHARED_DIR/wisdom/; name every missing or incomplete
    /// shard and fail when there is one (what the merge script runs).
    Merge {
        /// The shared directory of `kw slurm --out`.
        shared: PathBuf,
    },
}

/// `kw tune` options a task sets itself.
const TASK_OWNED: [&str; 7] = [
    "--wisdom-dir",
    "--log",
    "--state-dir",
    "--resume",
    "--bundled",
    "--t1",
    "--t4",
];

/// Checks the options passed on to `kw tune` now, on the login node, rather than in every
/// array task: they must parse as `kw tune`'s, and leave out what a task sets itself.
fn check_tune_args(args: &[String]) -> Result<()> {
    for w in args {
        let name = w.split('=').next().unwrap_or(w);
        if TASK_OWNED.contains(&name) {
            bail!(
                "`{name}` cannot be passed on to kw tune: each task sets it (its shard's \
                 directories under the shared directory)"
            );
        }
    }
    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct Tune {
        #[command(flatten)]
        args: super::tune::TuneArgs,
    }
    let mut words = vec!["placeholder.kwcap".to_string()];
    words.extend(args.iter().cloned());
    let tune = Tune::try_parse_from(&words).map_err(|e| {
        anyhow::anyhow!(
            "the kw tune options after `--` ({}): {}",
            args.join(" "),
            e.render().to_string().trim()
        )
    })?;
    // Their values too (a duration, a tolerance): every task would fail on them.
    super::tune::check_options(&tune.args)
        .with_context(|| format!("the kw tune options after `--` ({})", args.join(" ")))?;
    Ok(())
}

/// The captures named: files as they are, directories as their `.kwcap` files; absolute (as
/// given, symbolic links kept: a cluster's mount points are seen the same way on every
/// node), sorted, without repeats. Two captures with one file name are refused (their results logs
/// would share a name).
fn collect_captures(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let rd = std::fs::read_dir(input)
                .with_context(|| format!("{}: cannot list the directory", input.display()))?;
            out.extend(
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "kwcap") && p.is_file()),
            );
        } else if input.is_file() {
            out.push(input.clone());
        } else if input.exists() {
            bail!(
                "{}: not a regular file (a FIFO, a device?): not a capture",
                input.display()
            );
        } else {
            bail!("{}: no such capture file or directory", input.display());
        }
    }
    let mut abs = Vec::with_capacity(out.len());
    for p in out {
        // A file that is no capture (a results log, a damaged file) is found now, not after
        // the job waited in the queue and its task failed.
        kw_capture::Capture::open(&p)
            .with_context(|| format!("{}: not a capture kw slurm can tune", p.display()))?;
        abs.push(std::path::absolute(&p).with_context(|| format!("{}", p.display()))?);
    }
    abs.sort();
    abs.dedup();
    let mut names: Vec<(String, &PathBuf)> = abs
        .iter()
        .map(|p| {
            let stem = p.file_stem().unwrap_or_default();
            (stem.to_string_lossy().into_owned(), p)
        })
        .collect();
    names.sort();
    for w in names.windows(2) {
        if w[0].0 == w[1].0 {
            bail!(
                "{} and {} have the same file name: their results logs would collide; \
                 rename one",
                w[0].1.display(),
                w[1].1.display()
            );
        }
    }
    Ok(abs)
}

/// The shared directory: checked, then created, absolute. Its path may hold no white space
/// (`#SBATCH --output` cannot hold it), no `%` (a file name pattern to sbatch: `%j` is the job
/// id) and no `\` (which turns sbatch's patterns off, so that every task would write one log
/// file): refused before anything is created.
fn prepare_shared(dir: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(dir).with_context(|| format!("{}", dir.display()))?;
    let text = abs.to_string_lossy();
    let why = if text.chars().any(char::is_whitespace) {
        Some("white space, which `#SBATCH --output` cannot hold")
    } else if text.contains('%') {
        Some("`%`, which sbatch reads as a file name pattern in `#SBATCH --output` (`%j` is the job id)")
    } else if text.contains('\\') {
        Some("`\\`, which turns sbatch's file name patterns off (every task would write one log)")
    } else {
        None
    };
    if let Some(why) = why {
        bail!(
            "{}: the shared directory's path holds {why}; choose another",
            abs.display()
        );
    }
    kw_core::files::FileModes::get()
        .create_dir_all(&abs)
        .with_context(|| format!("creating the shared directory {}", abs.display()))?;
    Ok(abs)
}

fn new_run(a: SlurmArgs) -> Result<()> {
    let Some(out) = &a.out else {
        bail!("--out SHARED_DIR is required (the directory every node sees)");
    };
    let Some(tasks) = a.tasks else {
        bail!("--tasks N is required (the number of array tasks)");
    };
    if a.captures.is_empty() {
        bail!("no captures given: name .kwcap files or directories of them");
    }
    let captures = collect_captures(&a.captures)?;
    if captures.is_empty() {
        bail!(
            "no .kwcap files in {}",
            a.captures
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if tasks == 0 || tasks > captures.len() {
        bail!(
            "--tasks {tasks}: between 1 and the number of captures ({}); each task tunes at \
             least one",
            captures.len()
        );
    }
    for (opt, v) in [("--partition", &a.partition), ("--account", &a.account)] {
        if let Some(v) = v {
            script::check_word(opt, v)?;
        }
    }
    script::check_word("--job-name", &a.job_name)?;
    if let Some(t) = &a.time {
        script::check_time(t)?;
    }
    let extra = a
        .sbatch_lines
        .iter()
        .map(|l| script::sbatch_option(l))
        .collect::<Result<Vec<_>>>()?;
    let mut tune_args = Vec::new();
    if let Some(s) = &a.strategy {
        kw_tune::strategies::create(s, 0)?;
        tune_args.extend(["--strategy".to_string(), s.clone()]);
    }
    if let Some(b) = a.budget {
        tune_args.extend(["--budget".to_string(), b.to_string()]);
    }
    tune_args.extend(a.tune_args.iter().cloned());
    check_tune_args(&tune_args)?;
    let per_shard = captures.len().div_ceil(tasks);
    if let Some(w) = time::time_warning(&tune_args, per_shard, a.time.as_deref()) {
        eprintln!("kw slurm: warning: {w}");
    }
    let kw = match &a.kw {
        Some(k) if k.is_file() => std::path::absolute(k)?,
        Some(k) => bail!("--kw {}: no such file", k.display()),
        None => std::env::current_exe().context("finding the kw binary")?,
    };
    let shared = prepare_shared(out)?;
    // Two runs into one directory at once: the second waits, then finds the first's manifest
    // (the check below and the write are one step under this lock).
    let lock_path = shared.join(".kw-slurm.lock");
    let lock = match kw_core::files::FileModes::get().open_lock(&lock_path) {
        Ok(lock) => {
            kw_core::files::lock_waiting(
                &lock,
                &lock_path,
                &format!("the run in {}", shared.display()),
            )
            .with_context(|| format!("{}: cannot lock", lock_path.display()))?;
            Some(lock)
        }
        // Another user's run made it (private): their manifest, found below, says more.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => None,
        Err(e) => {
            return Err(e)
                .with_context(|| format!("{}: cannot open the lock file", lock_path.display()))
        }
    };
    let manifest_path = Manifest::path(&shared);
    if manifest_path.exists() {
        if !a.force {
            bail!(
                "{} exists: {} holds an earlier run (`kw slurm --resubmit-missing {}` \
                 continues it); pass --force to start over there, or choose another --out",
                manifest_path.display(),
                shared.display(),
                shared.display()
            );
        }
        // Its shards and its merged wisdom: a merge of this run must not mix them in.
        for old in [shared.join("shards"), merge::merged_dir(&shared)] {
            if old.exists() {
                std::fs::remove_dir_all(&old)
                    .with_context(|| format!("removing {}", old.display()))?;
                eprintln!(
                    "kw slurm: --force: removed the earlier run's {}",
                    old.display()
                );
            }
        }
        eprintln!("kw slurm: --force: replacing {}", manifest_path.display());
    } else {
        // No run of kw slurm was here: folders of these names are someone else's, and a merge
        // (or a later --force) would write into or remove them.
        for theirs in [shared.join("shards"), merge::merged_dir(&shared)] {
            if theirs.exists() {
                bail!(
                    "{} exists and no kw slurm run made it ({} has no {}): the run's shards and \
                     merged wisdom go there; choose another --out (an empty or new folder)",
                    theirs.display(),
                    shared.display(),
                    manifest_path
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                );
            }
        }
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT.into(),
        version: MANIFEST_VERSION,
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        kw_version: env!("CARGO_PKG_VERSION").into(),
        kw,
        tasks,
        captures,
        tune_args,
        slurm: SlurmOptions {
            partition: a.partition.clone(),
            account: a.account.clone(),
            time: a.time.clone(),
            gpus_per_task: a.gpus_per_task,
            cpus_per_task: a.cpus_per_task,
            extra,
            job_name: a.job_name.clone(),
        },
    };
    manifest.save(&shared)?;
    let (array, merge) = script::write_scripts(&manifest, &shared)?;
    drop(lock);
    println!(
        "kw slurm: {} capture(s) in {tasks} shard(s); wrote {}, {} and {}",
        manifest.captures.len(),
        manifest_path.display(),
        array.display(),
        merge.display()
    );
    if a.submit {
        let (job, merge_job) = submit::submit_run(&array, &merge, None)?;
        print_submitted(&job, &merge_job, &shared);
    } else {
        println!(
            "submit with:\n  jid=$(sbatch --parsable {})\n  sbatch --dependency=afterany:$jid {}\n\
             (or run kw slurm again with --submit)",
            script::shell_quote(&array.to_string_lossy()),
            script::shell_quote(&merge.to_string_lossy())
        );
    }
    Ok(())
}

fn print_submitted(job: &str, merge_job: &str, shared: &Path) {
    println!("submitted: array job {job}, merge job {merge_job}");
    println!(
        "the merged wisdom will be in {}; Slurm's output in {}",
        merge::merged_dir(shared).display(),
        shared.join(script::SLURM_LOGS).display()
    );
}

fn resubmit_missing(shared: &Path) -> Result<()> {
    let manifest = Manifest::load(shared)?;
    let left = shards::unfinished(shared, &manifest);
    if left.is_empty() {
        println!(
            "kw slurm: every shard of {} is complete: nothing to submit (`kw slurm merge {}` \
             merges them if the merge job did not)",
            shared.display(),
            shared.display()
        );
        return Ok(());
    }
    for line in merge::describe_unfinished(&manifest, &left) {
        println!("kw slurm: {line}");
    }
    let tasks: Vec<usize> = left.iter().map(|(t, _)| *t).collect();
    let (job, merge_job) = submit::submit_run(
        &shared.join(script::ARRAY_SCRIPT),
        &shared.join(script::MERGE_SCRIPT),
        Some(&tasks),
    )?;
    println!(
        "kw slurm: resubmitted task(s) {}",
        submit::array_list(&tasks)
    );
    print_submitted(&job, &merge_job, shared);
    Ok(())
}

pub fn run(mut a: SlurmArgs) -> Result<()> {
    match a.cmd.take() {
        Some(SlurmCmd::Task { shared, task_id }) => task::run(&shared, task_id),
        Some(SlurmCmd::Merge { shared }) => merge::run(&shared),
        None => match a.resubmit_missing.clone() {
            Some(shared) => resubmit_missing(&shared),
            None => new_run(a),
        },
    }
}
