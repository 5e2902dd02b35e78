//! [`Shared`]: the context, queue and device that a device's buffers and kernels hold on to.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device as ClDeviceId;

/// What the device's buffers and kernels share with it. The queue is declared first so it
/// is released before the context.
pub(crate) struct Shared {
    pub(crate) queue: CommandQueue,
    pub(crate) context: Context,
    pub(crate) device: ClDeviceId,
}
