//! Measuring on a loaded session: restore the written buffers, the launch arguments, timed
//! launches (one, or many restored device to device in between), the copy bandwidth.

use super::{ReplayArg, ReplaySession};
use kw_core::backend::{write_symbols, CompiledKernel, DeviceMemory, KernelArg};
use kw_core::{backend::BackendError, kernel_def::eval::Geometry};

impl ReplaySession {
    /// Resets every buffer the launch writes to its captured input state (device to device).
    pub fn restore(&self) -> Result<(), BackendError> {
        for a in &self.args {
            if let ReplayArg::Buffer {
                working,
                pristine: Some(p),
                ..
            } = a
            {
                working.copy_from(p.as_ref())?;
            }
        }
        Ok(())
    }

    /// The launch arguments.
    pub fn kernel_args(&self) -> Vec<KernelArg<'_>> {
        self.args
            .iter()
            .map(|a| match a {
                ReplayArg::Scalar(s) => KernelArg::Scalar(*s),
                ReplayArg::Buffer {
                    working, elem, len, ..
                } => KernelArg::device_buffer(working.as_ref(), *elem, *len),
            })
            .collect()
    }

    /// Launches a compiled configuration and returns its device time in milliseconds.
    pub fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
    ) -> Result<f64, BackendError> {
        write_symbols(self.device.as_ref(), kernel, &self.symbols)?;
        self.device
            .launch_timed(kernel, geometry, &self.kernel_args())
    }

    /// Runs a compiled configuration `runs` times, each run from the captured input state
    /// (restored device to device before it), with no host wait between runs; returns each
    /// launch's device time in milliseconds.
    pub fn run_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        runs: usize,
    ) -> Result<Vec<f64>, BackendError> {
        let restore: Vec<(&dyn DeviceMemory, &dyn DeviceMemory)> = self
            .args
            .iter()
            .filter_map(|a| match a {
                ReplayArg::Buffer {
                    working,
                    pristine: Some(p),
                    ..
                } => Some((working.as_ref(), p.as_ref())),
                _ => None,
            })
            .collect();
        write_symbols(self.device.as_ref(), kernel, &self.symbols)?;
        self.device
            .launch_timed_runs(kernel, geometry, &self.kernel_args(), &restore, runs)
    }

    /// Times device-to-device copies of the largest buffer: `(bytes moved per copy (read +
    /// write), median seconds per copy)`, timed on the host around blocking copies.
    pub fn copy_bandwidth(&self, repeats: usize) -> Result<Option<(u64, f64)>, BackendError> {
        let Some(largest) = self
            .args
            .iter()
            .filter_map(|a| match a {
                ReplayArg::Buffer { working, .. } => Some(working),
                ReplayArg::Scalar(_) => None,
            })
            .max_by_key(|m| m.len_bytes())
        else {
            return Ok(None);
        };
        let bytes = largest.len_bytes();
        if bytes == 0 {
            return Ok(None);
        }
        let scratch = self.device.alloc(bytes)?;
        scratch.copy_from(largest.as_ref())?; // warm-up
        let mut times = Vec::with_capacity(repeats);
        for _ in 0..repeats.max(1) {
            let t = std::time::Instant::now();
            scratch.copy_from(largest.as_ref())?;
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(Some((2 * bytes as u64, crate::measure::median(&mut times))))
    }
}
