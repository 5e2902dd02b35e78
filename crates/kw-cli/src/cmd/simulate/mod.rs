//! `kw simulate`: score search strategies on a measured space (a Kernel Tuner cache file,
//! `one.rs`), or on every space of a directory (`--suite DIR`, `suite.rs`); the arguments
//! and priors both read are in `args.rs`.

mod args;
mod one;
mod suite;

pub use args::SimulateArgs;

/// Runs `kw simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    match args.suite.clone() {
        Some(dir) => suite::run(&dir, &args),
        None => {
            // (clap's `requires` does not hold these back beside the cache file argument.)
            for (given, option) in [
                (!args.spaces.is_empty(), "--spaces"),
                (args.prior_family, "--prior-family"),
                (args.lookahead.is_some(), "--lookahead"),
            ] {
                if given {
                    anyhow::bail!(
                        "{option} needs --suite DIR (it applies to a directory of spaces); \
                         without it, give one cache file"
                    );
                }
            }
            one::run(args)
        }
    }
}
