//! [`Ahead`]: how many configurations the tuning loop keeps queued for one evaluator
//! ([`kw_tune::Evaluator::ahead`]), each compiled ahead on the compile pool: as few as keep
//! the measuring thread from waiting for the compiler. A proposal made further ahead is made
//! knowing fewer results (on the shared measured spaces, `hybrid6` with 16 queued reaches 0.910
//! of the optimum at 50 evaluations against 0.937 with one; `docs/strategies.md`), while a
//! queue too short leaves the device idle behind the compiler.
//!
//! The depth follows the waits themselves, not a mean compile time: compile and evaluation
//! times vary several-fold between configurations, and a depth sized on their means starves
//! the device (GEMM at 4096³ on an H100: the wall time 1.3-1.4x longer than before any of
//! this; `docs/measurements/h100-tuning-pipeline.txt`, run 1). It starts at its largest (the
//! first proposals are random and compile at once), grows by two after an evaluation that
//! waited for its compile, and shrinks by one after [`CALM`] evaluations in a row that did
//! not. A compile-bound run always waits and keeps every compile thread busy; a device-bound
//! one settles where waits are rare.

use std::time::Duration;

/// Evaluations in a row without a compile wait before the queue shortens by one.
pub const CALM: u32 = 8;

/// A wait shorter than this (and than 5% of the evaluation) is no wait.
const NOISE: Duration = Duration::from_millis(2);

/// The queue depth of one evaluator.
#[derive(Clone, Debug)]
pub struct Ahead {
    depth: usize,
    max: usize,
    calm: u32,
}

impl Ahead {
    /// For `threads` compile threads: at most `threads + 1` queued (the one measured and one
    /// compiling per thread), at least 2; starts at the most.
    pub fn new(threads: usize) -> Ahead {
        let max = threads.max(1) + 1;
        Ahead {
            depth: max,
            max,
            calm: 0,
        }
    }

    /// The depth now.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// After an evaluation that waited `waited` for its compile and took `took` in all
    /// (the wait included).
    pub fn observe(&mut self, waited: Duration, took: Duration) {
        let own = took.saturating_sub(waited);
        if waited > NOISE && waited.as_secs_f64() > 0.05 * own.as_secs_f64() {
            self.depth = (self.depth + 2).min(self.max);
            self.calm = 0;
        } else {
            self.calm += 1;
            if self.calm >= CALM {
                self.depth = self.depth.saturating_sub(1).max(2.min(self.max));
                self.calm = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn waits_grow_the_queue_and_calm_shrinks_it() {
        let mut a = Ahead::new(15);
        assert_eq!(a.depth(), 16);
        // Compile-bound: every evaluation waits; the queue stays full.
        for _ in 0..50 {
            a.observe(ms(300), ms(305));
            assert_eq!(a.depth(), 16);
        }
        // Device-bound, compiles always ready: one shorter per CALM evaluations, down to 2.
        for _ in 0..CALM {
            a.observe(ms(0), ms(90));
        }
        assert_eq!(a.depth(), 15);
        for _ in 0..(CALM as usize * 20) {
            a.observe(Duration::from_micros(50), ms(90));
        }
        assert_eq!(a.depth(), 2);
        // A wait grows it by two at once; a wait under 2 ms or 5% of the evaluation is none.
        a.observe(ms(40), ms(130));
        assert_eq!(a.depth(), 4);
        for _ in 0..(CALM - 1) {
            a.observe(ms(3), ms(200));
        }
        a.observe(ms(1), ms(5));
        assert_eq!(a.depth(), 3);
        // One thread: between 2 and 2.
        let mut one = Ahead::new(0);
        assert_eq!(one.depth(), 2);
        for _ in 0..(CALM * 3) {
            one.observe(ms(0), ms(10));
        }
        assert_eq!(one.depth(), 2);
    }
}
