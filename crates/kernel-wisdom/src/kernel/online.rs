//! The launches of a size under online tuning (`KW_TUNE=online`, [`crate::online`]): the
//! first one is captured for the tuning (in the process that tunes), later ones keep their
//! configuration until the tuned one is ready (own ranks) or until the launch every process
//! switches at (shared ranks), and then switch.

use super::{Event, Selected, WisdomKernel};
use crate::error::Error;
use crate::online::job::{self, Job, Prior};
use crate::online::shared::SizeFiles;
use crate::online::watch::{Turn, Watch};
use crate::online::{self as tune, TuneRanks};
use kw_capture::record;
use kw_core::backend::{CompiledKernel, KernelArg, Queue};
use kw_core::config::Config;
use std::sync::{Arc, PoisonError};

impl WisdomKernel {
    /// The wisdom files this kernel selects from (on disk, then embedded), as priors of its
    /// online tuning.
    fn wisdom_priors(&self) -> Vec<Prior> {
        (self.wisdom().files().into_iter())
            .map(|path| {
                match (self.embedded.iter()).find(|(label, _)| path == std::path::Path::new(label))
                {
                    Some((label, text)) => Prior::Embedded(label.clone(), text),
                    None => Prior::File(path.to_path_buf()),
                }
            })
            .collect()
    }

    /// The files of this kernel at `ps` in the online directory.
    fn size_files(&self, dir: &std::path::Path, ps: &[i64; 3]) -> SizeFiles {
        let axes = self.def.problem_size.len().clamp(1, 3);
        SizeFiles::new(dir, &self.def.tuning_key, self.device.info(), &ps[..axes])
    }

    /// For a new size without an exact wisdom record, when tuning online: watches it (once
    /// per process, kernel and size). With own ranks, only the process that takes the size's
    /// claim watches it; with shared ranks, every process does (to switch with the others).
    pub(super) fn online_watch(&self, selected: &mut Selected, ps: &[i64; 3]) {
        if selected.exact_wisdom || !tune::online() {
            return;
        }
        let s = tune::tune_settings();
        let Some(dir) = s.dir.as_deref() else {
            return;
        };
        let key = (
            self.def.tuning_key.clone(),
            self.device.info().name.clone(),
            *ps,
        );
        if !tune::first_start(&key) {
            return;
        }
        let files = self.size_files(dir, ps);
        let claim = match files.try_claim() {
            Ok(c) => c,
            Err(e) => {
                kw_core::diag::warn_once(&format!(
                    "online tuning of {}: not tuned here: {e}",
                    files.describe()
                ));
                None
            }
        };
        let shared = (s.ranks == TuneRanks::Shared).then_some((files, s.period));
        if claim.is_none() && shared.is_none() {
            return;
        }
        selected.watch = Some(Arc::new(Watch::new(claim, shared)));
    }

    /// A launch of a watched size.
    pub(super) fn launch_watched(
        &self,
        queue: Queue<'_>,
        selected: &Arc<Selected>,
        watch: &Arc<Watch>,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Event>, Error> {
        let selected = match watch.turn() {
            Turn::Keep => Arc::clone(selected),
            Turn::Capture => {
                return self.launch_for_tuning(queue, selected, watch, ps, args, want_event)
            }
            Turn::SwitchCompiled => match watch.compiled() {
                Some(t) => self.adopt(selected, t.config.clone(), Some(&t.kernel), ps, args),
                None => Arc::clone(selected),
            },
            Turn::SwitchTo(config) => self.adopt(selected, config, None, ps, args),
        };
        self.launch_or_fall_back(queue, &selected, ps, args, want_event)
            .map(|(_, event)| event)
    }

    /// The first launch, in the process that tunes the size: the buffers are copied on the
    /// device, on the launch's queue, before the launch (the candidates' inputs) and after it
    /// (the reference every candidate is verified against), into memory the tuning owns; the
    /// tuning's thread reads them back, writes the capture and runs `kw tune`. This thread
    /// only enqueues: no host copy, no wait, no file. When the copies cannot be made (no
    /// device memory for them), the size is not tuned, and the warning says so.
    fn launch_for_tuning(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        watch: &Arc<Watch>,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Event>, Error> {
        let settings = tune::tune_settings();
        let Some(dir) = settings.dir.clone() else {
            watch.finished_without_result();
            return self
                .launch_or_fall_back(queue, selected, ps, args, want_event)
                .map(|(_, e)| e);
        };
        let axes = self.def.problem_size.len().clamp(1, 3);
        let sizes: Vec<u64> = ps[..axes].iter().map(|&v| v as u64).collect();
        let stem = kw_capture::capture_file_stem(&self.def.tuning_key, &sizes);
        let job_dir = dir
            .join("jobs")
            .join(format!("{stem}-{}", std::process::id()));
        let files = self.size_files(&dir, ps);
        let device = self.device.as_ref();
        let shared = settings.ranks == TuneRanks::Shared;
        let not_tuned = |e: &dyn std::fmt::Display| {
            watch.finished_without_result();
            drop(watch.take_claim());
            if shared {
                // The others stop waiting for it, as for a failed tuning (`job::run`).
                if let Err(e) = files.mark_failed() {
                    kw_core::diag::error(&format!("online tuning of {}: {e}", files.describe()));
                }
            }
            kw_core::diag::warn(&format!(
                "online tuning of {}: not tuned: {e} (launches never wait for tuning, so the \
                 buffers are not copied to the host instead; `KW_TUNE=record` captures the size \
                 for `kw tune`)",
                files.describe()
            ));
        };
        let before = self
            .def
            .buffer_lens(args, ps, Some(device.info()))
            .map_err(record::RecordError::from)
            .and_then(|lens| record::snapshot_before(job_dir, device, queue, args, &lens))
            .map(|b| b.with_symbols(self.symbols.values(&self.def)))
            .inspect_err(|e| not_tuned(e))
            .ok();
        let launched = self.launch_or_fall_back(queue, selected, ps, args, want_event);
        let (fallback, event) = match launched {
            Ok(l) => l,
            Err(e) => {
                watch.finished_without_result();
                return Err(e);
            }
        };
        if let Some(before) = before {
            let config = &fallback.as_deref().unwrap_or(selected).config;
            match record::snapshot_after(before, device, queue, config, ps, args) {
                Ok(capture) => job::start(
                    Job {
                        files,
                        settings,
                        watch: Arc::clone(watch),
                        def: Arc::clone(&self.def),
                        device: Arc::clone(&self.device),
                        in_use: config.clone(),
                        priors: self.wisdom_priors(),
                    },
                    capture,
                ),
                Err(e) => not_tuned(&e),
            }
        }
        Ok(event)
    }

    /// Switches a size to `config` (with its compiled kernel when the tuning made it):
    /// later launches of the size use it, through the fast path again. When it is not valid
    /// for this launch or does not compile, the size keeps its configuration (the failure is
    /// reported and remembered); either way the size is no longer watched.
    fn adopt(
        &self,
        current: &Selected,
        config: Config,
        kernel: Option<&Arc<dyn CompiledKernel>>,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Arc<Selected> {
        if let Some(k) = kernel {
            // Compiled by the tuning, without the constant symbols: written here as `compile`
            // does (when that fails, `make_selected` compiles it again and says why).
            let written = if self.def.symbols.is_empty() {
                Ok(())
            } else {
                self.symbols.adopt(self.device.as_ref(), k)
            };
            if written.is_ok() {
                // `make_selected` below finds it.
                let _ = self.compile_slot(&config).set(Ok(Arc::clone(k)));
            }
        }
        let made = self
            .validate(&config)
            .and_then(|()| self.valid_at(&config, ps, Some(args)))
            .and_then(|()| self.make_selected(config.clone(), ps));
        let next = match made {
            Ok(s) => s,
            Err(e) => {
                self.record_failure(&config, ps, &e);
                Selected {
                    config: current.config.clone(),
                    kernel: Arc::clone(&current.kernel),
                    geometry: current.geometry,
                    exact_wisdom: current.exact_wisdom,
                    watch: None,
                }
            }
        };
        let next = Arc::new(next);
        self.by_size
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(*ps, Arc::clone(&next));
        // Shapes of this size pointed at the watched selection.
        self.by_shape.clear();
        next
    }
}
