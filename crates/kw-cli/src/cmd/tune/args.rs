//! `kw tune`'s command line: the arguments and the stop condition they make.

use anyhow::{bail, Context, Result};
use clap::Args;
use kw_tune::{strategies, Stop};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Clone)]
pub struct TuneArgs {
    /// Capture files (.kwcap) to tune, one after the other (or `--t1 FILE`, or `--bundled
    /// KERNEL`).
    pub(super) captures: Vec<PathBuf>,
    /// Tune the benchmark a T1 file describes: it is made a capture first (as `kw capture
    /// from-t1`, into `captures/`, reused while the file is unchanged), and its `Budget`
    /// applies unless `--budget`, `--time` or `--stop` is given. Repeatable.
    #[arg(long = "t1", value_name = "FILE")]
    pub(super) t1: Vec<PathBuf>,
    /// With `--t1`: the configuration whose output is the reference (`name=value,...`, as
    /// `kw capture from-t1 --reference-config`), instead of each file's `Default`.
    #[arg(long, value_name = "NAME=VALUE,...", requires = "t1")]
    pub(super) reference_config: Option<String>,
    /// Capture a bundled kernel first (into KW_CAPTURE_DIR, else `captures/`) and tune it
    /// (on CUDA when a CUDA device exists): `vector_add[:N]`, `stencil2d[:WxH]` or
    /// `stencil2d-wide[:WxH]` (its space widened to 288 combinations, of which a device's
    /// limits leave some: 232 on an H100): a self-contained measurement.
    #[arg(long)]
    pub(super) bundled: Option<String>,
    /// Search strategy (`kw simulate --strategy all` compares them on recorded spaces).
    #[arg(long, default_value = strategies::DEFAULT)]
    pub(super) strategy: String,
    /// Earlier results of the same kernel (other devices or problem sizes): Kernel Tuner
    /// cache files, T4 results files, kw results logs or wisdom files. Their best
    /// configurations that are valid here (parameters matched by name) are evaluated first;
    /// the search then runs as usual.
    /// The wisdom of the same tuning key (search path and --wisdom-dir; for a library kernel,
    /// the records shipped with the library too) is always a prior.
    #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with = "no_prior")]
    pub(super) prior: Vec<PathBuf>,
    /// Start the search from nothing: no prior, not even the wisdom of the same tuning key.
    #[arg(long)]
    pub(super) no_prior: bool,
    /// How priors seed the search (as `kw simulate --prior-settings`, docs/strategies.md),
    /// e.g. `local=8`. Default: the chosen settings.
    #[arg(long, value_name = "SETTINGS", conflicts_with = "no_prior")]
    pub(super) prior_settings: Option<String>,
    /// The strategy's seed.
    #[arg(long, default_value_t = 0)]
    pub(super) seed: u64,
    /// Stop after N evaluations (distinct configurations, failed ones included).
    #[arg(long)]
    pub(super) budget: Option<u64>,
    /// Stop after this much wall time per kernel (`90s`, `15m`, `1h`; default 15m when no
    /// other stop condition is given).
    #[arg(long)]
    pub(super) time: Option<String>,
    /// More stop conditions, any of which stops: `evals=N`, `time=15m`, `fraction=0.5`,
    /// `target=MS`, `no-improvement=N`, `no-improvement-time=5m` (comma-separated).
    #[arg(long)]
    pub(super) stop: Option<String>,
    /// The device: an index or a name substring (default: KW_DEVICE, else the first device of
    /// the capture's backend).
    #[arg(long)]
    pub(super) device: Option<String>,
    /// Tune on several devices at once: `all` (every device of the capture's backend) or
    /// indices as `kw devices` numbers them (`0,2`); default: KW_DEVICES (same syntax), which
    /// --device overrides. One worker process per device. Captures are shared out (each
    /// device takes the next); when devices of one model outnumber the captures left, they
    /// share one search and its results log (nothing evaluated twice; --resume works).
    /// Devices of different models tune separately: each model its own log and wisdom
    /// record. A device that fails is dropped, named, and the run goes on with the others
    /// (docs/tuning.md, "Several devices"). With one device this is exactly `--device`.
    #[arg(long, conflicts_with = "device", value_name = "all|I,J,...")]
    pub(super) devices: Option<String>,
    /// Where wisdom files are written. Default: the per-user wisdom directory, which
    /// applications read automatically (KW_USER_WISDOM_DIR, else
    /// ~/.local/share/kernel-wisdom/wisdom); give a project's `wisdom/` to ship the result.
    #[arg(long)]
    pub(super) wisdom_dir: Option<PathBuf>,
    /// The results log (JSON lines); with several captures, or when it is a directory or
    /// ends in `/`, a directory for one log each (`<capture name>.tune.jsonl`). Default:
    /// `<capture name>.tune.jsonl` in the state directory's `logs/`.
    #[arg(long)]
    pub(super) log: Option<PathBuf>,
    /// Also write the results as a T4 results file (the auto-tuning community's results
    /// schema) here, after each capture's run; with several captures, or when it is a
    /// directory or ends in `/`, a directory for one file each (`<capture name>.t4.json`).
    #[arg(long, value_name = "OUT.json")]
    pub(super) t4: Option<PathBuf>,
    /// The state directory (results logs in its `logs/`). Default: KW_STATE_DIR, else
    /// ~/.local/state/kernel-wisdom.
    #[arg(long)]
    pub(super) state_dir: Option<PathBuf>,
    /// Continue from the results log instead of starting over.
    #[arg(long)]
    pub(super) resume: bool,
    /// Do not compare outputs with the captured reference (the summary and the wisdom record
    /// then say UNVERIFIED).
    #[arg(long)]
    pub(super) no_verify: bool,
    /// Tune a capture that lacks a reference output for a buffer the kernel writes (kw tune
    /// refuses such a capture otherwise). Outputs that have a reference are still verified;
    /// the summary and the wisdom record say UNVERIFIED, with the reason.
    #[arg(long)]
    pub(super) allow_unverified: bool,
    /// Relative tolerance for float outputs, of the output's magnitude (its largest finite
    /// value); overrides the definition's per-buffer tolerance (default 1e-5). A finite
    /// number, 0 or more.
    #[arg(long, value_parser = kw_core::tolerance::parse_rtol, allow_hyphen_values = true)]
    pub(super) rtol: Option<f64>,
    /// Absolute tolerance for float outputs; overrides the definition's (default 1e-6). A
    /// finite number, 0 or more.
    #[arg(long, value_parser = kw_core::tolerance::parse_atol, allow_hyphen_values = true)]
    pub(super) atol: Option<f64>,
    /// A NaN where the reference has a NaN fails verification (by default NaN equals NaN).
    #[arg(long)]
    pub(super) nan_is_error: bool,
    /// Optimise this expression over `time` (ms), the problem size and the parameters
    /// instead of the time (overrides the definition's objective), e.g. GFLOP/s:
    /// `2*problem_size.x*problem_size.y*problem_size.z/(time*1e6)` with --maximize.
    #[arg(long)]
    pub(super) objective: Option<String>,
    /// The objective's name in summaries and wisdom records (default: its expression; `time`
    /// is the median time's and cannot be used).
    #[arg(long, requires = "objective")]
    pub(super) objective_name: Option<String>,
    /// Higher values of --objective are better.
    #[arg(long, requires = "objective")]
    pub(super) maximize: bool,
    /// Warm-up launches per configuration.
    #[arg(long, default_value_t = 1)]
    pub(super) warmup: usize,
    /// Timed launches per configuration (at most; fewer when --sample-time-ms runs out).
    #[arg(long, default_value_t = 15)]
    pub(super) samples: usize,
    /// Time budget per configuration for timed launches, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub(super) sample_time_ms: u64,
    /// Compile threads (default: CPUs - 1).
    #[arg(long)]
    pub(super) compile_threads: Option<usize>,
    /// Evaluation workers this process runs at once (`--devices`: one per device; 0 or 1:
    /// one): each keeps its share of the compile threads busy compiling ahead.
    #[arg(skip)]
    pub(super) workers: usize,
    /// Also measure the default configuration again (spread) and a device copy (bandwidth).
    #[arg(long)]
    pub(super) report_timing: bool,
    /// Time limit of one evaluation (`30s`, `2m`), and on OpenCL of its first launch (where a
    /// driver may compile, as PoCL does); past it the configuration is a failure ("timed
    /// out"). Default: 10 times the default configuration's evaluation, at least 10 s (120 s
    /// for the default configuration itself), after (on OpenCL) a first launch of at least
    /// 60 s.
    #[arg(long)]
    pub(super) eval_timeout: Option<String>,
    /// Measure in this process instead of a worker process: no time limit, and a
    /// configuration that crashes ends the run (for measuring the cost of isolation).
    #[arg(long)]
    pub(super) no_isolation: bool,
    /// Before writing a winner, measure the best few candidates, the default and the
    /// configuration the capture was made with again, alternating, this many rounds; the
    /// winner is written only when it is faster than the configuration in use (else the
    /// default) with the stated confidence (else that one is; 10 rounds: the 2nd to 9th of
    /// the rounds' speed-ups, 97.9%). 0: write the search's best unconfirmed.
    #[arg(long, default_value_t = 10)]
    pub(super) confirm_rounds: usize,
    /// How many of the best candidates the confirmation measures again.
    #[arg(long, default_value_t = 3)]
    pub(super) confirm_top: usize,
    /// Spend at most this share of the wall time evaluating (`0.1` or `10%`): after an
    /// evaluation that took `d`, the next starts `d / share` after it began (for a run that
    /// shares the device with an application: online tuning).
    #[arg(long, value_parser = kw_core::duration::parse_share)]
    pub(super) max_share: Option<f64>,
    /// Start no evaluation once evaluations took this much time in all (`30s`): a budget of
    /// device time (evaluations count whole, compile waits included).
    #[arg(long)]
    pub(super) max_device_time: Option<String>,
    /// Stop, as Ctrl-C does, when standard input closes (for a parent process that runs
    /// `kw tune`: online tuning, whose `kw tune` ends with the application).
    #[arg(long)]
    pub(super) stop_on_stdin_eof: bool,
}

/// Parses `90`, `90s`, `15m`, `1h`, `250ms` ([`kw_core::duration::parse_duration`]).
pub fn parse_duration(text: &str) -> Result<Duration> {
    kw_core::duration::parse_duration(text).map_err(anyhow::Error::msg)
}

/// The stop condition of a T1 file's `Budget` (`None` when it has none).
pub(super) fn t1_stop(budget: &kw_core::kernel_tuner::T1Budget) -> Option<Stop> {
    let mut list = Vec::new();
    if let Some(n) = budget.evaluations {
        list.push(Stop::Evaluations(n));
    }
    if let Some(s) = budget.seconds {
        list.push(Stop::WallTime(kw_core::duration::saturating_secs(s)));
    }
    if let Some(f) = budget.fraction {
        list.push(Stop::SpaceFraction(f));
    }
    match list.len() {
        0 => None,
        1 => list.pop(),
        _ => Some(Stop::Any(list)),
    }
}

impl TuneArgs {
    /// Where wisdom is written: `--wisdom-dir`, else the per-user wisdom directory.
    pub(super) fn wisdom_dir(&self) -> Result<PathBuf> {
        match &self.wisdom_dir {
            Some(d) => Ok(d.clone()),
            None => kw_core::user_dirs::user_wisdom_dir().context(
                "no per-user wisdom directory (neither KW_USER_WISDOM_DIR, XDG_DATA_HOME nor \
                 HOME is set): pass --wisdom-dir",
            ),
        }
    }

    /// Where results logs go by default: `--state-dir`, else the state directory, in its
    /// `logs/`; the current directory when neither is known.
    pub(super) fn log_dir(&self) -> PathBuf {
        self.state_dir
            .clone()
            .or_else(kw_core::user_dirs::state_dir)
            .map_or_else(PathBuf::new, |d| d.join("logs"))
    }

    /// Whether the command line gives a stop condition of its own.
    pub(super) fn has_stop(&self) -> bool {
        self.budget.is_some() || self.time.is_some() || self.stop.is_some()
    }
}

pub(super) fn stop_condition(args: &TuneArgs) -> Result<Stop> {
    let mut list = Vec::new();
    if let Some(n) = args.budget {
        list.push(Stop::Evaluations(n));
    }
    if let Some(t) = &args.time {
        list.push(Stop::WallTime(parse_duration(t)?));
    }
    for item in args
        .stop
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
    {
        let (k, v) = item.split_once('=').with_context(|| {
            format!("bad --stop item `{item}`: expected NAME=VALUE, e.g. `fraction=0.1`")
        })?;
        let num = || {
            v.trim()
                .parse::<f64>()
                .with_context(|| format!("bad number in `{item}`"))
        };
        // A count of evaluations: a whole number, 1 or more (0 or a negative number would
        // stop before anything is measured).
        let count = || -> Result<u64> {
            match v.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => bail!("bad --stop item `{item}`: a count of evaluations, 1 or more"),
            }
        };
        let time = || -> Result<Duration> {
            let d = parse_duration(v)?;
            // A positive time below 1 ns rounds to 0, and is as useless as 0.
            if d.is_zero() {
                bail!("bad --stop item `{item}`: a time above 0 (1 ns or more)");
            }
            Ok(d)
        };
        list.push(match k.trim() {
            "evals" | "evaluations" => Stop::Evaluations(count()?),
            "time" => Stop::WallTime(time()?),
            "fraction" => {
                let f = num()?;
                if !(f > 0.0 && f <= 1.0) {
                    bail!("bad --stop item `{item}`: a fraction of the space is in (0, 1]");
                }
                Stop::SpaceFraction(f)
            }
            "target" => {
                let t = num()?;
                if !t.is_finite() {
                    bail!("bad --stop item `{item}`: the target is a finite time in ms");
                }
                Stop::Target(t)
            }
            "no-improvement" => Stop::NoImprovementEvaluations(count()?),
            "no-improvement-time" => Stop::NoImprovementTime(time()?),
            other => bail!(
                "unknown --stop condition `{other}` (evals, time, fraction, target, \
                 no-improvement, no-improvement-time)"
            ),
        });
    }
    if list.is_empty() {
        list.push(Stop::WallTime(Duration::from_secs(15 * 60)));
    }
    Ok(if list.len() == 1 {
        list.remove(0)
    } else {
        Stop::Any(list)
    })
}

impl TuneArgs {
    /// The command line's overrides of the definition's tolerances: `--rtol` and `--atol`
    /// must be finite and 0 or more (their value parser checks it; so does this, for
    /// arguments made otherwise).
    pub(super) fn tolerance(&self) -> Result<kw_replay::ToleranceOverride> {
        kw_replay::ToleranceOverride::new(self.rtol, self.atol, self.nan_is_error.then_some(true))
            .context("--rtol/--atol")
    }
}
