//! The launch phase of a [`WisdomKernel`]: [`WisdomKernel::launch`] and
//! [`WisdomKernel::launch_with`], the memo's fast path, the full path (problem size,
//! selection, capture, online tuning), the fallback to the default configuration, and the
//! launches of an explicit or a timed configuration.

use super::options::{LaunchOptions, Launched};
use super::shape_memo::ArgShape;
use super::{Event, Selected, WisdomKernel};
use crate::capture;
use crate::error::Error;
use kw_capture::record;
use kw_core::backend::{KernelArg, Queue};
use kw_core::config::Config;
use kw_core::kernel_def::eval::ArgView;
use kw_core::kernel_def::eval::Geometry;
use std::sync::{Arc, PoisonError};

impl WisdomKernel {
    /// Launches with the configuration selected for the arguments' problem size, on the
    /// device's own queue or stream (asynchronous: synchronise the device or read a buffer
    /// to wait). [`WisdomKernel::launch_with`] takes [`LaunchOptions`] (the application's
    /// queue, an event, an explicit configuration, a timing).
    ///
    /// If capture selects this launch (`KW_CAPTURE`, see the crate documentation), the buffer
    /// arguments are copied to the host before and after it (so this call waits for the
    /// launch) and the capture is written in the background; a capture failure is reported
    /// on standard error and never changes this call's result.
    ///
    /// A problem size with a negative axis is an error ([`Error::Eval`], naming the kernel
    /// and the size); one with an empty axis (0) launches nothing and returns `Ok` (nothing
    /// is compiled or captured either).
    ///
    /// Every buffer is checked against its declared length first: a shorter one is an
    /// [`Error::BufferTooShort`] and nothing is launched.
    #[inline]
    pub fn launch(&self, args: &[KernelArg<'_>]) -> Result<(), Error> {
        self.enqueue(Queue::DEFAULT, args, false).map(drop)
    }

    /// Launches as `options` say. Without a configuration and without timing, this is
    /// [`WisdomKernel::launch`] on [`LaunchOptions::queue`] (buffer arguments may be the
    /// application's memory: `interop::cuda::slice_arg`, `interop::opencl::buffer_arg`,
    /// [`RawMem`](crate::RawMem)), returning the completion event if asked. With
    /// [`LaunchOptions::config`], that configuration is launched (checked, compiled once, no
    /// fallback, no capture; errors carry the build log). With [`LaunchOptions::timed`], the
    /// call waits and returns the device time (device's own queue only, else
    /// [`Error::LaunchOptions`]).
    #[inline]
    pub fn launch_with(
        &self,
        args: &[KernelArg<'_>],
        options: LaunchOptions<'_>,
    ) -> Result<Launched, Error> {
        if options.config.is_some() || options.timed {
            return self.launch_chosen(args, options);
        }
        let event = self.enqueue(options.queue, args, options.event)?;
        Ok(Launched {
            event,
            device_ms: None,
        })
    }

    fn enqueue(
        &self,
        queue: Queue<'_>,
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Event>, Error> {
        // Arguments of a shape launched before: their problem size was evaluated and every
        // buffer checked then, with the same result (see `shape_memo`), and their selection
        // is compiled: launch it (under the memo's read lock: no reference count touched).
        self.check_symbols_set()?;
        let mut shape = ArgShape::EMPTY;
        let memoised = shape.set(args);
        if memoised && !capture::active() {
            let hit = self.by_shape.with(&shape, |(ps, selected)| {
                (selected.watch.is_none())
                    .then(|| self.launch_selected(queue, selected, ps, args, want_event))
            });
            if let Some(Some(Ok(event))) = hit {
                return Ok(event);
            }
            // Not launched before, or the launch failed: the full path below (which falls
            // back to the default configuration when the selected one fails).
        }
        let ps = self.checked_problem_size(args)?;
        if ps.contains(&0) {
            self.empty_launch(&ps);
            return Ok(None);
        }
        let selected = self.selection(&ps, args)?;
        if memoised {
            self.by_shape.remember(&shape, (ps, Arc::clone(&selected)));
        }
        if capture::active() {
            // A launch its queue refuses is not counted (KW_CAPTURE_SKIP, the limit), nor
            // reported as a capture failure: it fails as it would without capture.
            self.check_queue(queue, &selected)?;
            if let Some(dir) = capture::ticket(&self.def.tuning_key, &ps, selected.exact_wisdom) {
                return self.launch_captured(queue, &selected, &ps, args, dir, want_event);
            }
        }
        if let Some(watch) = &selected.watch {
            return self.launch_watched(queue, &selected, watch, &ps, args, want_event);
        }
        if !selected.exact_wisdom && crate::online::recording() {
            self.check_queue(queue, &selected)?;
            if let Some(dir) = crate::online::record_ticket(&self.def.tuning_key, &ps) {
                return self.launch_captured(queue, &selected, &ps, args, dir, want_event);
            }
        }
        self.launch_or_fall_back(queue, &selected, &ps, args, want_event)
            .map(|(_, event)| event)
    }

    /// The launch's error where `queue` cannot take this device's launches.
    fn check_queue(&self, queue: Queue<'_>, selected: &Selected) -> Result<(), Error> {
        self.device
            .check_queue(queue)
            .map_err(|source| self.config_error(&selected.config, source))
    }

    /// What a launch of this (non-empty) size and these arguments uses: the size's
    /// selection, prepared at its first launch.
    fn selection(&self, ps: &[i64; 3], args: &[KernelArg<'_>]) -> Result<Arc<Selected>, Error> {
        let cached = {
            let map = self.by_size.read().unwrap_or_else(PoisonError::into_inner);
            map.get(ps).cloned()
        };
        Ok(match cached {
            Some(s) if self.still_valid(&s.config, ps, args) => s,
            // Restrictions over argument values refuse this size's selection for these
            // arguments: a selection for this launch alone.
            Some(_) => Arc::new(self.select_and_compile(ps, args)?),
            None => self.prepare(ps, args)?,
        })
    }

    /// A launch of an explicit configuration ([`LaunchOptions::config`]) or a timed one
    /// ([`LaunchOptions::timed`]; the selection when no configuration is given): no capture,
    /// no fallback.
    fn launch_chosen(
        &self,
        args: &[KernelArg<'_>],
        options: LaunchOptions<'_>,
    ) -> Result<Launched, Error> {
        if options.timed && !options.queue.is_default() {
            return Err(Error::LaunchOptions {
                kernel: self.def.kernel_name.clone(),
                reason: "a timed launch runs on the device's own queue or stream only".into(),
            });
        }
        if options.timed && !options.queue.wait_list().is_empty() {
            return Err(Error::LaunchOptions {
                kernel: self.def.kernel_name.clone(),
                reason: "a timed launch waits for no events: wait for them first".into(),
            });
        }
        let ps = self.checked_problem_size(args)?;
        if ps.contains(&0) {
            if let Some(config) = options.config {
                self.validate(config)?;
            }
            self.empty_launch(&ps);
            return Ok(Launched::default());
        }
        let selected = match options.config {
            Some(config) => Arc::new(self.explicit(config, &ps, args)?),
            None => self.selection(&ps, args)?,
        };
        if options.timed {
            let g = self.geometry_of(&selected, &ps, args)?;
            let ms = self
                .device
                .launch_timed(selected.kernel.as_ref(), &g, args)
                .map_err(|source| self.config_error(&selected.config, source))?;
            return Ok(Launched {
                event: None,
                device_ms: Some(ms),
            });
        }
        let event = self.launch_selected(options.queue, &selected, &ps, args, options.event)?;
        Ok(Launched {
            event,
            device_ms: None,
        })
    }

    /// A launch whose problem size has an empty axis (0 elements): there is nothing to do,
    /// so nothing is selected, compiled, launched or captured, and the launch succeeds (as a
    /// loop over no elements does; drivers refuse a grid of 0 blocks). A negative axis is an
    /// error of [`KernelDef::problem_size_for`].
    #[cold]
    fn empty_launch(&self, ps: &[i64; 3]) {
        if kw_core::diag::debug_enabled() {
            kw_core::diag::debug(&format!(
                "kernel `{}`: problem size {ps:?} is empty: nothing launched",
                self.def.kernel_name
            ));
        }
    }

    /// Launches `selected`; if it fails and is not the default, falls back to the default
    /// configuration for this problem size. Returns the fallback when one was used.
    pub(super) fn launch_or_fall_back(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<(Option<Arc<Selected>>, Option<Event>), Error> {
        match self.launch_selected(queue, selected, ps, args, want_event) {
            // Arguments the backend refuses (a buffer of another context) are refused whatever
            // the configuration: the selection is not blamed for them.
            Err(e) if selected.config != self.default_config && !e.is_arguments_fault() => {
                self.record_failure(&selected.config, ps, &e);
                let default = self.default_at(ps, Some(args))?;
                let fallback = Arc::new(self.make_selected(default, ps)?);
                self.by_size
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(*ps, Arc::clone(&fallback));
                // Shapes of this size pointed at the replaced selection.
                self.by_shape.clear();
                let event = self.launch_selected(queue, &fallback, ps, args, want_event)?;
                Ok((Some(fallback), event))
            }
            other => other.map(|event| (None, event)),
        }
    }

    /// A launch that capture selected: copies before, launch, copies after, hand-off to the
    /// background writer. Capture failures are reported, never returned.
    fn launch_captured(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        dir: std::path::PathBuf,
        want_event: bool,
    ) -> Result<Option<Event>, Error> {
        let sink = |job, _: &Config| capture::submit(job);
        self.launch_recorded(queue, selected, ps, args, dir, want_event, sink)
    }

    /// [`WisdomKernel::launch_captured`] handing the capture (and the configuration launched)
    /// to `sink`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_recorded(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        dir: std::path::PathBuf,
        want_event: bool,
        sink: impl FnOnce(kw_capture::CaptureJob, &Config) -> Result<(), record::RecordError>,
    ) -> Result<Option<Event>, Error> {
        let key = &self.def.tuning_key;
        let device = self.device.as_ref();
        let lens = self.def.buffer_lens(args, ps, Some(device.info()))?;
        let before = record::before_launch(dir, &self.def, device, queue, args, &lens)
            .map(|b| b.with_symbols(self.symbols.values(&self.def)))
            .inspect_err(|e| capture::report(key, e))
            .ok();
        let (fallback, event) = self.launch_or_fall_back(queue, selected, ps, args, want_event)?;
        if let Some(before) = before {
            let config = &fallback.as_deref().unwrap_or(selected).config;
            let job = record::after_launch(before, &self.def, device, queue, config, ps, args);
            if let Err(e) = job.and_then(|job| sink(job, config)) {
                capture::report(key, &e);
            }
        }
        Ok(event)
    }

    pub(super) fn geometry_of(
        &self,
        s: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Geometry, Error> {
        match s.geometry {
            Some(g) => Ok(g),
            None => self.config_geometry(&s.config, ps, Some(&ArgView(args))),
        }
    }

    #[inline]
    pub(super) fn launch_selected(
        &self,
        queue: Queue<'_>,
        s: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Event>, Error> {
        let g = self.geometry_of(s, ps, args)?;
        self.device
            .launch_on(queue, s.kernel.as_ref(), &g, args, want_event)
            .map_err(|source| self.config_error(&s.config, source))
    }
}
