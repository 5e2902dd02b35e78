//! `Library::convolution`: a 2D convolution with the filter in constant memory, any output
//! size, any filter up to [`defs::CONVOLUTION_MAX_FILTER`] on a side.
//!
//! The filter's shape is compiled into the kernel (its loops unroll), so each shape is its
//! own definition and [`WisdomKernel`], built at its first call; they share the tuning key
//! `kw_convolution`, the problem size (width, height, filter area) telling their records
//! apart. The filter goes to constant memory at each call: the CUDA `__constant__` symbol
//! (`WisdomKernel::set_symbol`), or the OpenCL `__constant` buffer argument; a lock per
//! filter shape keeps a call's filter and its launch together when threads share the library.

use super::{defs, expect_len, int, Library};
use crate::error::Error;
use crate::kernel::WisdomKernel;
use kw_core::buffer::DeviceBuffer;
use kw_core::device::BackendKind;
use std::sync::{Arc, Mutex, PoisonError};

const R: &str = "convolution";

/// The kernel of one filter shape and the filter last written. The lock is held from
/// writing the filter to enqueueing the launch that reads it.
pub(super) struct Convolution {
    kernel: Arc<WisdomKernel>,
    filter: Mutex<Filter>,
}

/// The filter in constant memory: its contents (a call with the same filter writes nothing:
/// in CUDA a symbol write waits for the stream) and, in OpenCL, its buffer.
#[derive(Default)]
struct Filter {
    written: Vec<f32>,
    buffer: Option<DeviceBuffer<f32>>,
}

/// `a * b` elements, or [`Error::Shape`] naming them.
fn elements(a: usize, b: usize, what: &str) -> Result<usize, Error> {
    super::elements(R, a, b, what)
}

/// Refuses a filter side outside 1 to [`defs::CONVOLUTION_MAX_FILTER`].
fn check_filter([fw, fh]: [usize; 2]) -> Result<(), Error> {
    let max = defs::CONVOLUTION_MAX_FILTER;
    if (1..=max).contains(&fw) && (1..=max).contains(&fh) {
        return Ok(());
    }
    Err(Error::Shape {
        routine: R,
        message: format!(
            "a {fw} x {fh} filter: its width and height must be 1 to {max} (the kernel's \
             shared-memory tile leaves room for a halo of {} elements)",
            max - 1
        ),
    })
}

impl Library {
    /// `output` (width x height, row-major) = the 2D convolution of `input` with `filter`
    /// (`filter_width` x `filter_height`, row-major): output(x, y) = sum over i < filter_height,
    /// j < filter_width of input(x + j, y + i) filter(i, j) (Kernel Tuner's convolution: the
    /// filter is not flipped). `input` is padded by the filter's halo:
    /// (width + filter_width - 1) x (height + filter_height - 1) elements (for a 'same'
    /// convolution with a zero boundary, pad the image with zeros). Any width and height;
    /// filter sides 1 to
    /// [`defs::CONVOLUTION_MAX_FILTER`]. Wrong lengths or filter sizes are [`Error::Shape`].
    pub fn convolution(
        &self,
        [width, height]: [usize; 2],
        [fw, fh]: [usize; 2],
        filter: &[f32],
        input: &DeviceBuffer<f32>,
        output: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        check_filter([fw, fh])?;
        expect_len(
            R,
            "filter (filter_width x filter_height)",
            filter.len(),
            fw * fh,
        )?;
        let halo = |side: usize, f: usize, what: &str| {
            side.checked_add(f - 1).ok_or_else(|| Error::Shape {
                routine: R,
                message: format!("{what} {side} plus the filter's halo overflows"),
            })
        };
        let padded = elements(
            halo(width, fw, "width")?,
            halo(height, fh, "height")?,
            "input",
        )?;
        expect_len(
            R,
            "input ((width + filter_width - 1) x (height + filter_height - 1))",
            input.len(),
            padded,
        )?;
        expect_len(
            R,
            "output (width x height)",
            output.len(),
            elements(width, height, "output")?,
        )?;
        super::separate(
            R,
            &[("output", output.memory())],
            &[("input", input.memory())],
        )?;
        int(R, "the input's length", padded)?;
        if width == 0 || height == 0 {
            return Ok(());
        }
        let (w, h) = (int(R, "width", width)?, int(R, "height", height)?);
        let conv = self.convolution_for([fw, fh])?;
        let mut slot = conv.filter.lock().unwrap_or_else(PoisonError::into_inner);
        let bits = |v: &f32| v.to_bits();
        let changed = !slot.written.iter().map(bits).eq(filter.iter().map(bits));
        if changed {
            // Forgotten until written: a failed write is retried at the next call.
            slot.written.clear();
        }
        if self.device.info().backend == BackendKind::Cuda {
            if changed {
                conv.kernel.set_symbol("filter", filter)?;
                slot.written.extend_from_slice(filter);
            }
            return conv
                .kernel
                .launch(&[output.arg(), input.arg(), w.into(), h.into()]);
        }
        if slot.buffer.is_none() {
            slot.buffer = Some(DeviceBuffer::new(self.device.as_ref(), fw * fh)?);
        }
        let Filter { written, buffer } = &mut *slot;
        let Some(buffer) = buffer.as_ref() else {
            unreachable!("allocated above")
        };
        if changed {
            buffer.write(filter)?;
            written.extend_from_slice(filter);
        }
        conv.kernel
            .launch(&[output.arg(), input.arg(), w.into(), h.into(), buffer.arg()])
    }

    /// The bound convolution kernel of a `filter_width` x `filter_height` filter (built at
    /// its first use): launched directly, it takes `(out, in, width, height)` and, in OpenCL,
    /// the filter buffer; in CUDA its `filter` symbol holds the last call's filter.
    pub fn convolution_kernel(&self, filter: [usize; 2]) -> Result<Arc<WisdomKernel>, Error> {
        Ok(Arc::clone(&self.convolution_for(filter)?.kernel))
    }

    fn convolution_for(&self, filter: [usize; 2]) -> Result<Arc<Convolution>, Error> {
        check_filter(filter)?;
        let mut map = self
            .convolutions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = map.get(&filter) {
            return Ok(Arc::clone(c));
        }
        let def = defs::convolution(self.device.info().backend, filter).build()?;
        let conv = Arc::new(Convolution {
            kernel: Arc::new(self.bind(R, def)?),
            filter: Mutex::new(Filter::default()),
        });
        map.insert(filter, Arc::clone(&conv));
        Ok(conv)
    }
}
