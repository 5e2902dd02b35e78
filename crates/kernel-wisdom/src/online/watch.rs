//! [`Watch`]: what the launches of one problem size under online tuning share with the
//! tuning that runs for it in the background: the launch count, the launch from which the
//! tuned configuration is used, and that configuration once compiled.

use super::shared::{self, Checkpoint, Claim, SizeFiles};
use kw_core::backend::CompiledKernel;
use kw_core::config::Config;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Not known yet.
const UNKNOWN: u64 = u64::MAX;

/// The tuned configuration, compiled.
pub(crate) struct Tuned {
    pub(crate) config: Config,
    pub(crate) kernel: Arc<dyn CompiledKernel>,
}

/// The state of one size under online tuning.
pub(crate) struct Watch {
    /// Launches of this size so far (this kernel, this process).
    launches: AtomicU64,
    /// The launch index (from 1) from which the tuned configuration is used.
    switch_at: AtomicU64,
    /// The tuned configuration, compiled (by the tuning; for processes that did not tune,
    /// when first needed).
    tuned: OnceLock<Tuned>,
    /// The configuration to use from `switch_at` when this process did not tune it.
    published: Mutex<Option<Config>>,
    /// Nothing will switch (the tuning failed or found nothing).
    done: AtomicBool,
    /// This process tunes the size: the claim, until the tuning takes it.
    claim: Mutex<Option<Claim>>,
    /// With shared ranks: the files every process of the directory reads.
    shared: Option<(SizeFiles, u64)>,
}

/// What a launch of a watched size does.
pub(crate) enum Turn {
    /// The first launch, in the process that tunes: capture it and start the tuning.
    Capture,
    /// Keep the current selection.
    Keep,
    /// Use the tuned configuration, compiled here, from this launch on.
    SwitchCompiled,
    /// Use this configuration (published by another process; compiled now) from this launch
    /// on.
    SwitchTo(Config),
}

impl Watch {
    /// A watch; `claim`: this process tunes the size; `shared`: checkpoints every `period`
    /// launches against those files.
    pub(crate) fn new(claim: Option<Claim>, shared: Option<(SizeFiles, u64)>) -> Watch {
        Watch {
            launches: AtomicU64::new(0),
            switch_at: AtomicU64::new(UNKNOWN),
            tuned: OnceLock::new(),
            published: Mutex::new(None),
            done: AtomicBool::new(false),
            claim: Mutex::new(claim),
            shared,
        }
    }

    /// The claim, for the tuning (once).
    pub(crate) fn take_claim(&self) -> Option<Claim> {
        self.claim
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Whether this process holds the claim (its first launch is captured).
    fn claimed(&self) -> bool {
        self.claim
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The tuning's result, compiled: with shared ranks, launches switch to it at the launch
    /// the published record names (learnt at a checkpoint); with own ranks, once
    /// [`Watch::switch_now`] says so.
    pub(crate) fn tuned(&self, tuned: Tuned) {
        let _ = self.tuned.set(tuned);
    }

    /// Own ranks: the next launch switches to the tuned configuration (once published).
    pub(crate) fn switch_now(&self) {
        if self.shared.is_none() && self.tuned.get().is_some() {
            self.switch_at.store(0, Ordering::Release);
        }
    }

    /// Nothing will switch.
    pub(crate) fn finished_without_result(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// The compiled tuned configuration, if this process has it.
    pub(crate) fn compiled(&self) -> Option<&Tuned> {
        self.tuned.get()
    }

    /// Counts a launch and says what it does. The shared-ranks rule (every process switches
    /// at the same launch index) is in [`super::shared`].
    pub(crate) fn turn(&self) -> Turn {
        let n = self.launches.fetch_add(1, Ordering::Relaxed) + 1;
        if n == 1 && self.claimed() {
            return Turn::Capture;
        }
        let mut at = self.switch_at.load(Ordering::Acquire);
        if at == UNKNOWN && !self.done.load(Ordering::Acquire) {
            if let Some((files, period)) = &self.shared {
                if n.is_multiple_of(*period) {
                    at = self.checkpoint(files, n);
                }
            }
        }
        if n < at || at == UNKNOWN {
            return Turn::Keep;
        }
        // Once switched, the size's selection no longer has this watch: this runs once.
        match self.tuned.get() {
            Some(_) => Turn::SwitchCompiled,
            None => match self
                .published
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            {
                Some(config) => Turn::SwitchTo(config),
                None => Turn::Keep,
            },
        }
    }

    /// A checkpoint at launch `n` (shared ranks): learns the published launch index, or
    /// registers that this process passed `n` (see [`shared::checkpoint`]).
    fn checkpoint(&self, files: &SizeFiles, n: u64) -> u64 {
        match shared::checkpoint(files, n) {
            Ok(Checkpoint::Adopt { at, .. }) if at < n => {
                // Published for a launch this process passed: only after a failed
                // checkpoint of its own. It keeps its configuration.
                self.done.store(true, Ordering::Release);
                UNKNOWN
            }
            Ok(Checkpoint::Adopt { at, config }) => {
                *self
                    .published
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(config);
                self.switch_at.store(at, Ordering::Release);
                at
            }
            Ok(Checkpoint::Failed) => {
                self.done.store(true, Ordering::Release);
                UNKNOWN
            }
            Ok(Checkpoint::Pending) => UNKNOWN,
            Err(e) => {
                // Not registered: this process never switches (the others may not have
                // waited for it), so it must stop looking too.
                kw_core::diag::error_once(
                    &format!("online-checkpoint {}", files.describe()),
                    &format!(
                        "online tuning of {}: a checkpoint failed, this process keeps its \
                         configuration: {e}",
                        files.describe()
                    ),
                );
                self.done.store(true, Ordering::Release);
                UNKNOWN
            }
        }
    }
}
