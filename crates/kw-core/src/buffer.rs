//! [`DeviceBuffer`]: a typed, user-facing wrapper over a backend's [`DeviceMemory`].

use crate::backend::{BackendError, Device, DeviceMemory, KernelArg};
use crate::scalar::Scalar;
use std::fmt;
use std::marker::PhantomData;

/// A buffer of `len` elements of `T` on a device.
///
/// ```no_run
/// # fn demo(device: &dyn kw_core::backend::Device) -> Result<(), kw_core::backend::BackendError> {
/// use kw_core::buffer::DeviceBuffer;
/// let a = DeviceBuffer::from_slice(device, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(a.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok(()) }
/// ```
pub struct DeviceBuffer<T: Scalar> {
    mem: Box<dyn DeviceMemory>,
    len: usize,
    _elem: PhantomData<T>,
}

impl<T: Scalar> DeviceBuffer<T> {
    /// A buffer of `len` elements with unspecified contents.
    pub fn new(device: &dyn Device, len: usize) -> Result<Self, BackendError> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(BackendError::Api {
                op: "alloc",
                message: format!("{len} elements overflow the address space"),
            })?;
        Ok(DeviceBuffer {
            mem: device.alloc(bytes)?,
            len,
            _elem: PhantomData,
        })
    }

    /// A buffer over the application's memory `raw` (a `cl_mem` or CUDA device pointer of
    /// `device`'s context; not freed on drop), of as many whole elements as it holds:
    /// what the C API hands to the library routines.
    pub fn view(device: &dyn Device, raw: crate::backend::RawMem) -> Result<Self, BackendError> {
        let len = raw.len_bytes() / std::mem::size_of::<T>();
        Ok(DeviceBuffer {
            mem: device.view(raw)?,
            len,
            _elem: PhantomData,
        })
    }

    /// Whether this buffer and `other` share device memory (the same allocation viewed twice,
    /// or overlapping ranges of one): [`DeviceMemory::overlaps`].
    pub fn overlaps<U: Scalar>(&self, other: &DeviceBuffer<U>) -> bool {
        self.mem.overlaps(other.mem.as_ref())
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(device: &dyn Device, data: &[T]) -> Result<Self, BackendError> {
        let buf = DeviceBuffer::new(device, data.len())?;
        buf.write(data)?;
        Ok(buf)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Overwrites the buffer's start with `data` (at most `len()` elements).
    pub fn write(&self, data: &[T]) -> Result<(), BackendError> {
        self.write_at(0, data)
    }

    /// Overwrites elements `offset..offset + data.len()`.
    pub fn write_at(&self, offset: usize, data: &[T]) -> Result<(), BackendError> {
        let size = std::mem::size_of::<T>();
        self.mem.write(offset * size, bytemuck::cast_slice(data))
    }

    /// Fills the whole buffer with `value`.
    pub fn fill(&self, value: T) -> Result<(), BackendError> {
        self.write(&vec![value; self.len])
    }

    /// Reads the buffer's start into `out` (at most `len()` elements).
    pub fn read(&self, out: &mut [T]) -> Result<(), BackendError> {
        self.mem.read(0, bytemuck::cast_slice_mut(out))
    }

    /// The whole buffer, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>, BackendError> {
        let mut out = vec![T::zeroed(); self.len];
        self.read(&mut out)?;
        Ok(out)
    }

    /// Copies all of `src` (same device, at most as long) into this buffer's start.
    pub fn copy_from(&self, src: &DeviceBuffer<T>) -> Result<(), BackendError> {
        self.mem.copy_from(src.mem.as_ref())
    }

    /// The buffer as a launch argument.
    pub fn arg(&self) -> KernelArg<'_> {
        KernelArg::device_buffer(self.mem.as_ref(), T::TYPE, self.len)
    }

    /// The untyped memory.
    pub fn memory(&self) -> &dyn DeviceMemory {
        self.mem.as_ref()
    }
}

impl<'a, T: Scalar> From<&'a DeviceBuffer<T>> for KernelArg<'a> {
    fn from(b: &'a DeviceBuffer<T>) -> Self {
        b.arg()
    }
}

impl<T: Scalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceBuffer<{}>[{}]", T::TYPE, self.len)
    }
}
