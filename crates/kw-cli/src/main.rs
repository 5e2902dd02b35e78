//! `kw`: inspect tuning spaces, captures and wisdom; tune kernels.
//!
//! The `kw` command-line tool of kernel-wisdom (a binary only; this crate has no `lib.rs`).
//! Each subcommand is a module of `cmd/`: `space`, `capture`, `tune/`, `wisdom`, `simulate/`
//! (one space, or the suite), `log`, `cache`, `slurm/` (job arrays on a Slurm cluster);
//! `isolated.rs` and `worker.rs` (the hidden
//! `__eval-worker` subcommand) are `kw tune`'s evaluation worker processes and their watchdog.
//!
//! ## Layer
//!
//! Layer 3 (`docs/architecture.md`), beside `kw-capi`: depends on `kw-core`, `kw-capture`,
//! `kw-tune`, `kw-replay` and `kernel-wisdom` (which opens the devices; its `cuda` and `opencl`
//! features are passed through), and nothing in the workspace depends on it. No `unsafe`
//! (`#![forbid(unsafe_code)]`).
//!
//! ## Where to start reading
//!
//! `main.rs` (the subcommands), then `cmd/tune/mod.rs` and `cmd/tune/one.rs` (one capture
//! tuned, from loading to the wisdom record), `cmd/isolated.rs` and `cmd/worker.rs`. The whole
//! `kw tune` path, step by step, is in `docs/architecture.md`.

#![forbid(unsafe_code)]

mod cmd;

use clap::{Parser, Subcommand};

/// kernel-wisdom: kernels that tune themselves for every device and problem size.
#[derive(Parser)]
#[command(name = "kw", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The devices kw can use: index, backend, exact name, architecture; and the compile
    /// cache and wisdom directories a program here would use.
    #[command(
        after_help = "Examples:\n  kw devices\n  kw devices --json | jq '.[].name'\n  \
                            KW_DEVICE=1 my-app    # run an application on device 1"
    )]
    Devices(cmd::devices::DevicesArgs),
    /// The library kernels at their benchmark sizes on one device: verified against the CPU,
    /// timed, and set against the device's copy bandwidth measured in the same run.
    Bench(cmd::bench::BenchArgs),
    /// Tuning spaces: size and structure.
    #[command(
        subcommand,
        after_help = "Examples:\n  kw space stats captures/vector_add_4096.kwcap"
    )]
    Space(cmd::space::SpaceCmd),
    /// Wisdom files: list, show, explain a selection, merge.
    #[command(
        subcommand,
        after_help = "Examples:\n  kw wisdom ls\n  kw wisdom explain vector_add --device 0 --problem-size 4096"
    )]
    Wisdom(cmd::wisdom::WisdomCmd),
    /// Capture files: list, show, verify.
    #[command(
        subcommand,
        after_help = "Examples:\n  kw capture ls\n  kw capture show captures/vector_add_4096.kwcap"
    )]
    Capture(cmd::capture::CaptureCmd),
    /// Score search strategies on a measured space (Kernel Tuner cache file), without a GPU.
    #[command(
        after_help = "Examples:\n  kw simulate gemm_A100.json.gz --strategy all --budgets 25,50,100\n  \
                      kw simulate --suite spaces/ --budgets 50,100,200 --json > scores.json"
    )]
    Simulate(cmd::simulate::SimulateArgs),
    /// Tune captured kernels: replay each capture under many configurations, verified, and
    /// add the best to its wisdom file.
    #[command(
        after_help = "Examples:\n  kw tune captures/vector_add_4096.kwcap --time 2m\n  \
                      kw tune captures/*.kwcap --budget 200 --wisdom-dir wisdom/   # into a project's shipped wisdom"
    )]
    Tune(Box<cmd::tune::TuneArgs>),
    /// Tune on a Slurm cluster: a job array over shards of the captures and a merge job
    /// that names every missing shard (`docs/cluster.md`).
    #[command(
        after_help = "Examples:\n  kw slurm captures/ --out /shared/run1 --tasks 8 --partition gpu \\\n    \
                      --time 2:00:00 --gpus-per-task 1 --budget 200 --submit\n  \
                      kw slurm --resubmit-missing /shared/run1\n  \
                      kw slurm merge /shared/run1"
    )]
    Slurm(Box<cmd::slurm::SlurmArgs>),
    /// The on-disk compile cache shared by applications and `kw tune`: list, stats, clear.
    #[command(subcommand, after_help = "Examples:\n  kw cache ls\n  kw cache stats")]
    Cache(cmd::cache::CacheCmd),
    /// A self-contained HTML report (SVG figures, no network) on results logs, wisdom,
    /// captures and `kw simulate --json` output.
    #[command(
        after_help = "Examples:\n  kw report ~/.local/state/kernel-wisdom/logs/*.jsonl wisdom/ -o report/\n  \
                      kw simulate --suite spaces/ --budgets 50,100,200 --json > ours.json\n  \
                      kw report ours.json --peer theirs.json -o report/"
    )]
    Report(cmd::report::ReportArgs),
    /// Results logs of tuning runs.
    #[command(
        subcommand,
        after_help = "Examples:\n  kw log export run.tune.jsonl --kt-cache kt.json"
    )]
    Log(cmd::log::LogCmd),
    /// The evaluation worker `kw tune` starts (not for people).
    #[command(name = "__eval-worker", hide = true)]
    EvalWorker(cmd::worker::WorkerArgs),
}

/// The exit status of a `kw` whose reader went away: what a shell shows for a process ended
/// by SIGPIPE (128 + 13), as `cat` or `yes` end under `| head -1`.
const BROKEN_PIPE_EXIT: i32 = 141;

/// True for the panic of `println!`/`eprintln!` writing to a closed pipe.
fn is_broken_pipe_panic(message: &str) -> bool {
    message.starts_with("failed printing to std")
        && message.to_ascii_lowercase().contains("broken pipe")
}

/// Makes every command end quietly when its reader goes away (`kw capture show FILE | head
/// -1`). Rust ignores SIGPIPE, so printing to a closed pipe fails and `println!` panics; this
/// hook turns exactly that panic into [`BROKEN_PIPE_EXIT`] with no message (any other panic
/// is reported as before). Restoring the default SIGPIPE action instead would also kill `kw`
/// when it writes to a child process that died, and needs `unsafe`.
fn end_quietly_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        if message.is_some_and(is_broken_pipe_panic) {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        report(info);
    }));
}

/// True when `e` (or what caused it) is a write to a closed pipe.
fn is_broken_pipe_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() {
    end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices(a) => cmd::devices::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Space(c) => cmd::space::run(c),
        Command::Wisdom(c) => cmd::wisdom::run(c),
        Command::Capture(c) => cmd::capture::run(c),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Log(c) => cmd::log::run(c),
        Command::Cache(c) => cmd::cache::run(c),
        Command::Report(a) => cmd::report::run(a),
        Command::Tune(a) => cmd::tune::run(*a),
        Command::Slurm(a) => cmd::slurm::run(*a),
        Command::EvalWorker(a) => cmd::worker::run(a),
    };
    if let Err(e) = result {
        if is_broken_pipe_error(&e) {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        eprintln!("kw: error: {}", error_text(&e));
        std::process::exit(1);
    }
}

/// The error and its causes, `: `-separated, without repeats: a cause whose text its
/// parent's message already ends with (typed errors that print their source) is left out;
/// control characters other than line breaks and tabs are written as escapes.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut last = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !last.is_empty() && last.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
        last = text;
    }
    // A name read from a file (a tuning key, a path) must not drive the terminal.
    kw_core::diag::printable(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    /// A tuning key read from a capture (`kw tune`'s error lines) cannot clear the screen.
    #[test]
    fn error_text_escapes_control_characters() {
        let e = anyhow::anyhow!("the metadata's tuning_key `\u{1b}[2J\u{1b}[31mevil`");
        let text = error_text(&e.context("tuning x.kwcap"));
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(text.contains("evil"), "{text:?}");
    }

    #[test]
    fn broken_pipes_are_told_apart() {
        assert!(is_broken_pipe_panic(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_broken_pipe_panic(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_broken_pipe_panic(
            "failed printing to stdout: Disk full"
        ));
        assert!(!is_broken_pipe_panic("index out of bounds"));
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(is_broken_pipe_error(
            &anyhow::Error::new(pipe).context("printing")
        ));
        assert!(!is_broken_pipe_error(&anyhow::anyhow!("bad file")));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: cannot write: {source}")]
    struct Typed {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn error_chains_do_not_repeat_causes() {
        let io = std::io::Error::other("Read-only file system (os error 30)");
        let e = anyhow::Error::new(Typed {
            path: "wisdom/k.json".into(),
            source: io,
        })
        .context("tuning a.kwcap");
        assert_eq!(
            error_text(&e),
            "tuning a.kwcap: wisdom/k.json: cannot write: Read-only file system (os error 30)"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&plain), "outer: inner");
    }
}
