//! `kw`: inspect tuning spaces, captures and wisdom; tune kernels.

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
    /// Tuning spaces: size and structure.
    #[command(subcommand)]
    Space(cmd::space::SpaceCmd),
    /// Wisdom files: list, show, explain a selection, merge.
    #[command(subcommand)]
    Wisdom(cmd::wisdom::WisdomCmd),
    /// Capture files: list, show, verify.
    #[command(subcommand)]
    Capture(cmd::capture::CaptureCmd),
    /// Score search strategies on a measured space (Kernel Tuner cache file), without a GPU.
    Simulate(cmd::simulate::SimulateArgs),
    /// Tune captured kernels: replay each capture under many configurations, verified, and
    /// add the best to its wisdom file.
    Tune(cmd::tune::TuneArgs),
    /// Results logs of tuning runs.
    #[command(subcommand)]
    Log(cmd::log::LogCmd),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Space(c) => cmd::space::run(c),
        Command::Wisdom(c) => cmd::wisdom::run(c),
        Command::Capture(c) => cmd::capture::run(c),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Log(c) => cmd::log::run(c),
        Command::Tune(a) => cmd::tune::run(a),
    };
    if let Err(e) = result {
        eprintln!("kw: error: {e:#}");
        std::process::exit(1);
    }
}
