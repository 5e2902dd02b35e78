//! [`LaunchOptions`]: how [`WisdomKernel::launch_with`] launches (on which queue, with which
//! configuration, with an event or a timing), and [`Launched`], what it gives back.

use kw_core::backend::{DeviceEvent, Queue};
use kw_core::config::Config;

#[cfg(doc)]
use super::WisdomKernel;

/// How a launch runs; [`LaunchOptions::default`] is what [`WisdomKernel::launch`] does: the
/// selected configuration on the device's own queue or stream, no event, no timing. A
/// value of plain fields, built on the stack: choosing options allocates nothing.
///
/// ```no_run
/// use kernel_wisdom::{demo_kernels, open_default_device, DeviceBuffer, LaunchOptions, WisdomKernel};
/// # fn main() -> Result<(), kernel_wisdom::Error> {
/// let device = open_default_device()?;
/// let add = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;
/// let x = DeviceBuffer::from_slice(device.as_ref(), &[1.0f32, 2.0, 3.0])?;
/// let y = DeviceBuffer::<f32>::new(device.as_ref(), 3)?;
/// let args = [y.arg(), x.arg(), x.arg(), 3i32.into()];
/// let mut config = add.default_config().clone();
/// config.set("elems_per_thread", 2);
/// let done = add.launch_with(&args, LaunchOptions::new().config(&config).timed())?;
/// println!("{:?} ms", done.device_ms);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct LaunchOptions<'a> {
    /// Where the launch is enqueued: [`Queue::DEFAULT`] (the device's own queue or stream),
    /// or the application's (`interop::cuda::stream_queue`, `interop::opencl::queue`,
    /// `interop::opencl::queue_after`, or a raw handle through [`Queue::cuda_raw`] /
    /// [`Queue::opencl_raw`]), after the events it names.
    pub queue: Queue<'a>,
    /// A configuration of the space to launch instead of the selected one (what a tuner or a
    /// test does): checked against the space and the launch's restrictions, compiled once,
    /// launched without capture and without fallback to the default.
    pub config: Option<&'a Config>,
    /// Return the launch's completion event where the backend has one (OpenCL: a
    /// `interop::opencl::ClEvent`, whose `.0` is the `opencl3` event; CUDA: none, record
    /// your own event on your stream).
    pub event: bool,
    /// Wait for the launch and return its device time, measured with device events or
    /// profiling counters. Only on the device's own queue, with no events to wait for; no
    /// capture, no fallback.
    pub timed: bool,
}

impl LaunchOptions<'static> {
    /// The options of [`WisdomKernel::launch`].
    pub const fn new() -> LaunchOptions<'static> {
        LaunchOptions {
            queue: Queue::DEFAULT,
            config: None,
            event: false,
            timed: false,
        }
    }
}

impl<'a> LaunchOptions<'a> {
    /// Enqueues on `queue` (see [`LaunchOptions::queue`]).
    pub fn on<'b>(self, queue: Queue<'b>) -> LaunchOptions<'b>
    where
        'a: 'b,
    {
        LaunchOptions { queue, ..self }
    }

    /// Launches `config` instead of the selection (see [`LaunchOptions::config`]).
    pub fn config<'b>(self, config: &'b Config) -> LaunchOptions<'b>
    where
        'a: 'b,
    {
        LaunchOptions {
            config: Some(config),
            ..self
        }
    }

    /// Asks for the launch's completion event (see [`LaunchOptions::event`]).
    pub fn event(self) -> Self {
        LaunchOptions {
            event: true,
            ..self
        }
    }

    /// Waits and measures the launch's device time (see [`LaunchOptions::timed`]).
    pub fn timed(self) -> Self {
        LaunchOptions {
            timed: true,
            ..self
        }
    }
}

/// What [`WisdomKernel::launch_with`] gives back.
#[derive(Default)]
#[non_exhaustive]
pub struct Launched {
    /// The launch's completion, when [`LaunchOptions::event`] asked for it and the backend
    /// has one.
    pub event: Option<Box<dyn DeviceEvent>>,
    /// The launch's device time in milliseconds, when [`LaunchOptions::timed`] asked for it
    /// and something was launched (an empty problem size launches nothing).
    pub device_ms: Option<f64>,
}

impl std::fmt::Debug for Launched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launched")
            .field("event", &self.event.is_some())
            .field("device_ms", &self.device_ms)
            .finish()
    }
}
