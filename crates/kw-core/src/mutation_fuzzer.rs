//! A small mutation fuzzer for the tests of the file readers and the expression parser
//! (`cargo fuzz` needs a nightly toolchain and libFuzzer; this runs on stable, in ordinary
//! tests). [`fuzz`] feeds mutations of seed inputs to a target and collects the inputs that
//! make it panic. Each fuzz test runs a short, fixed number of executions by default (CI
//! stays fast); `KW_FUZZ_SECS=600` makes every target run for 10 minutes instead.
//!
//! Mutations: bit flips, random and "interesting" bytes, insertions, deletions, duplicated
//! and repeated ranges (long chains, deep nesting), splices of two inputs, dictionary tokens,
//! truncations. Mutants are mutated again (a random walk from the seeds); there is no
//! coverage feedback.

use crate::rng::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Environment variable: seconds each fuzz target runs (instead of its short default).
pub const FUZZ_SECS_ENV: &str = "KW_FUZZ_SECS";
/// Environment variable: the random seed (default 1).
pub const FUZZ_SEED_ENV: &str = "KW_FUZZ_SEED";
/// The largest input generated.
pub const MAX_INPUT: usize = 1 << 16;

/// What a fuzz run did.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    /// The target's name.
    pub name: String,
    /// Inputs run.
    pub executions: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Panics: the message and where the input was saved.
    pub findings: Vec<String>,
}

impl std::fmt::Display for FuzzReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FUZZ {}: {} executions in {:.1} s ({:.0}/s), {} finding(s)",
            self.name,
            self.executions,
            self.elapsed.as_secs_f64(),
            self.executions as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.findings.len()
        )
    }
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8], dict: &[&[u8]]) {
    const INTERESTING: [u8; 12] = [
        0, 1, 0x7f, 0x80, 0xff, b'0', b'9', b'"', b'{', b'[', b'\n', b'\\',
    ];
    let rounds = 1 + rng.index(4);
    for _ in 0..rounds {
        let len = input.len();
        match rng.index(11) {
            0 if len > 0 => {
                let i = rng.index(len);
                input[i] ^= 1 << rng.index(8);
            }
            1 if len > 0 => {
                let i = rng.index(len);
                input[i] = rng.next_u64() as u8;
            }
            2 if len > 0 => {
                let i = rng.index(len);
                input[i] = INTERESTING[rng.index(INTERESTING.len())];
            }
            3 => {
                let i = rng.index(len + 1);
                input.insert(i, rng.next_u64() as u8);
            }
            4 if len > 0 => {
                let a = rng.index(len);
                let b = (a + 1 + rng.index(16)).min(len);
                input.drain(a..b);
            }
            5 if len > 0 => {
                let a = rng.index(len);
                let b = (a + 1 + rng.index(32)).min(len);
                let chunk = input[a..b].to_vec();
                let at = rng.index(input.len() + 1);
                input.splice(at..at, chunk);
            }
            6 if len > 0 => {
                // A range repeated many times: long chains, deep nesting, huge numbers.
                let a = rng.index(len);
                let b = (a + 1 + rng.index(8)).min(len);
                let times = 1 + rng.index(2000);
                let chunk: Vec<u8> = input[a..b].repeat(times);
                input.splice(b..b, chunk);
            }
            7 if !other.is_empty() => {
                let a = rng.index(other.len());
                let b = (a + 1 + rng.index(64)).min(other.len());
                let at = rng.index(len + 1);
                input.splice(at..at, other[a..b].iter().copied());
            }
            8 if !dict.is_empty() => {
                let token = dict[rng.index(dict.len())];
                let at = rng.index(len + 1);
                input.splice(at..at, token.iter().copied());
            }
            9 if len > 0 => input.truncate(rng.index(len)),
            _ => {
                let i = rng.index(len + 1);
                input.insert(i, INTERESTING[rng.index(INTERESTING.len())]);
            }
        }
    }
    input.truncate(MAX_INPUT);
}

/// Runs `target` on mutations of `seeds` (and on the seeds themselves first): `quick`
/// executions, or for `KW_FUZZ_SECS` seconds when that is set. A panic is a finding: its
/// input is saved under `$TMPDIR/kw-fuzz-findings/` and the run goes on. `dict` holds tokens
/// worth inserting (keywords, operators, field names).
pub fn fuzz(
    name: &str,
    seeds: &[Vec<u8>],
    dict: &[&[u8]],
    quick: u64,
    target: impl FnMut(&[u8]),
) -> FuzzReport {
    let budget = match std::env::var(FUZZ_SECS_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
    {
        Some(s) if s.is_finite() && s > 0.0 => Budget::Time(crate::duration::saturating_secs(s)),
        _ => Budget::Executions(quick),
    };
    let seed: u64 = std::env::var(FUZZ_SEED_ENV)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    fuzz_with(name, seeds, dict, budget, seed, target)
}

/// How long [`fuzz_with`] runs.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// This many executions.
    Executions(u64),
    /// This much wall time.
    Time(Duration),
}

/// [`fuzz`] with an explicit budget and seed (ignores the environment).
pub fn fuzz_with(
    name: &str,
    seeds: &[Vec<u8>],
    dict: &[&[u8]],
    budget: Budget,
    seed: u64,
    mut target: impl FnMut(&[u8]),
) -> FuzzReport {
    let mut rng = Rng::new(seed ^ crate::config::fnv1a64(name.as_bytes()));
    let started = Instant::now();
    let mut report = FuzzReport {
        name: name.to_string(),
        ..FuzzReport::default()
    };
    let empty = [Vec::new()];
    let seeds = if seeds.is_empty() { &empty[..] } else { seeds };
    let mut current = seeds[0].clone();
    let done = |n: u64, t: Instant| match budget {
        Budget::Time(d) => t.elapsed() >= d,
        Budget::Executions(e) => n >= e,
    };
    let mut run = |input: &[u8], report: &mut FuzzReport| {
        report.executions += 1;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| target(input))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".to_string());
            let dir = std::env::temp_dir().join(format!("kw-fuzz-findings-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            let path: PathBuf = dir.join(format!("{name}-{}.bin", report.findings.len()));
            let _ = std::fs::write(&path, input);
            report
                .findings
                .push(format!("{message} (input saved to {})", path.display()));
        }
    };
    for s in seeds {
        run(s, &mut report);
    }
    while !done(report.executions, started) {
        // A random walk: usually mutate the last mutant, sometimes restart from a seed.
        if rng.chance(0.2) || current.len() >= MAX_INPUT / 2 {
            current = seeds[rng.index(seeds.len())].clone();
        }
        let other = &seeds[rng.index(seeds.len())];
        mutate(&mut rng, &mut current, other, dict);
        let input = current.clone();
        run(&input, &mut report);
    }
    report.elapsed = started.elapsed();
    println!("{report}");
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_are_findings_and_the_run_goes_on() {
        let r = fuzz_with(
            "self-test",
            &[b"abc".to_vec()],
            &[b"!"],
            Budget::Executions(300),
            7,
            |input| {
                if input.contains(&b'!') {
                    panic!("found the bang");
                }
            },
        );
        assert_eq!(r.executions, 300);
        assert!(!r.findings.is_empty());
        assert!(r.findings[0].contains("found the bang"));
    }
}
