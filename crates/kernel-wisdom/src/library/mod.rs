//! Tuned routines to call in one line: [`Library`] launches the kernels of
//! `kernels/library/` (one source for OpenCL and CUDA) through [`WisdomKernel`], so each
//! problem size gets the configuration the wisdom selects for it (tuned records where there
//! are, the default elsewhere; the records shipped in `wisdom/kw_*.json` are embedded, and a
//! file on the wisdom path wins over them). Every routine works at every size, with no padding asked of
//! the caller: the kernels guard their edges. Wrong shapes or lengths are
//! [`Error::Shape`], never a crash.
//!
//! ```no_run
//! use kernel_wisdom::{library::Library, open_default_device, DeviceBuffer};
//! # fn main() -> Result<(), kernel_wisdom::Error> {
//! let device = open_default_device()?;
//! let lib = Library::new(device.clone());
//! let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; 300 * 200])?;
//! let t = DeviceBuffer::<f32>::new(device.as_ref(), 300 * 200)?;
//! lib.transpose(300, 200, &a, &t)?;
//! assert_eq!(lib.sum(&a)?, 60_000.0);
//! // C (300 x 300) = A (300 x 200) B (200 x 300), column-major
//! let c = DeviceBuffer::<f32>::new(device.as_ref(), 300 * 300)?;
//! lib.gemm([300, 300, 200], 1.0, &a, &t, 0.0, &c)?;
//! // a 298 x 198 output of a 3 x 3 box filter over A taken as a 300 x 200 image
//! let blurred = DeviceBuffer::<f32>::new(device.as_ref(), 298 * 198)?;
//! lib.convolution([298, 198], [3, 3], &[1.0 / 9.0; 9], &a, &blurred)?;
//! # Ok(()) }
//! ```
//!
//! Besides these: [`Library::stencil3d`], [`Library::hotspot`] (Rodinia's thermal simulation,
//! several time steps fused per launch) and [`Library::nbody`] (a step of the all-pairs n-body
//! problem); `docs/library.md` lists every kernel, its parameters and its bound in `kw bench`.
//!
//! Each kernel is also a tuning benchmark: [`defs`] holds the definitions (`kw tune` tunes
//! their captures; `KW_CAPTURE=kw_*` captures an application's calls), `reference` the CPU
//! results they are checked against.

mod convolution;
pub mod defs;
mod gemm;
pub mod half;
mod hotspot;
mod nbody;
pub mod reference;

pub use hotspot::{HotspotCoefficients, HOTSPOT_OBJECTIVE};
pub use nbody::{NbodyStep, FLOPS_PER_INTERACTION, FMA_PEAK_CHAINS};

use crate::error::Error;
use crate::kernel::WisdomKernel;
use kw_core::backend::{Device, DeviceMemory};
use kw_core::buffer::DeviceBuffer;
use kw_core::scalar::Scalar;
use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// The library's routines on one device. Kernels are built and bound at their first call;
/// a `Library` may be shared between threads.
pub struct Library {
    device: Arc<dyn Device>,
    wisdom_dir: Option<PathBuf>,
    kernels: Mutex<HashMap<&'static str, Arc<WisdomKernel>>>,
    /// `reduce_sum`'s one-element result buffer.
    scalar: Mutex<Option<DeviceBuffer<f32>>>,
    /// The convolution kernels, one per filter (width, height).
    convolutions: Mutex<HashMap<[usize; 2], Arc<convolution::Convolution>>>,
    /// `hotspot`'s scratch grid (kept for the next call of the same size).
    scratch: Mutex<Option<DeviceBuffer<f32>>>,
    /// `gemm`'s split-K scratch (`work`, `counts`) for a padded (M, N), zeroed.
    gemm_scratch: Mutex<Option<gemm::GemmScratch>>,
    /// Buffers the routines made for their own use (`gemm`'s transposed and padded operands),
    /// kept for later calls: `DeviceBuffer<T>`s of any `T`, the most recent last.
    workspace: Mutex<Vec<Box<dyn Any + Send>>>,
}

/// The most buffers [`Library`] keeps between calls for the routines' own use (an f32 `gemm`
/// at a size it pads uses up to four: B transposed, then padded, A and C padded);
/// `Library::free_workspace` frees them.
const WORKSPACE_KEEP: usize = 8;

/// An `i32` of a size, or [`Error::Shape`] naming the routine.
fn int(routine: &'static str, what: &str, v: usize) -> Result<i32, Error> {
    i32::try_from(v).map_err(|_| Error::Shape {
        routine,
        message: format!("{what} = {v} is more than the kernels' 32-bit sizes allow"),
    })
}

/// `a * b` elements, or [`Error::Shape`] naming the routine and `what` overflows.
fn elements(routine: &'static str, a: usize, b: usize, what: &str) -> Result<usize, Error> {
    a.checked_mul(b).ok_or_else(|| Error::Shape {
        routine,
        message: format!("{what}: {a} x {b} elements overflow"),
    })
}

/// `len` must be `want` (`what` names the buffer and how `want` follows from the shape).
fn expect_len(routine: &'static str, what: &str, len: usize, want: usize) -> Result<(), Error> {
    if len == want {
        return Ok(());
    }
    Err(Error::Shape {
        routine,
        message: format!("{what} holds {len} elements, the shape needs {want}"),
    })
}

/// Refuses a call whose output shares device memory with another of its buffers (the same
/// buffer passed twice, or two views of one allocation): the kernels read their inputs while
/// they write their outputs, and declare their pointers `restrict`.
fn separate(
    routine: &'static str,
    outputs: &[(&str, &dyn DeviceMemory)],
    inputs: &[(&str, &dyn DeviceMemory)],
) -> Result<(), Error> {
    for (i, (name, out)) in outputs.iter().enumerate() {
        let others = outputs
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, o)| o)
            .chain(inputs);
        for (other, mem) in others {
            if out.overlaps(*mem) {
                return Err(Error::Shape {
                    routine,
                    message: format!(
                        "{name} and {other} share memory: an output must be a buffer of its own"
                    ),
                });
            }
        }
    }
    Ok(())
}

impl Library {
    /// The routines on `device`, selecting from the wisdom search path (`KW_WISDOM_PATH`,
    /// then `./wisdom`).
    pub fn new(device: Arc<dyn Device>) -> Library {
        Library {
            device,
            wisdom_dir: None,
            kernels: Mutex::new(HashMap::new()),
            scalar: Mutex::new(None),
            convolutions: Mutex::new(HashMap::new()),
            scratch: Mutex::new(None),
            gemm_scratch: Mutex::new(None),
            workspace: Mutex::new(Vec::new()),
        }
    }

    /// Frees the device memory the routines keep between calls for their own use: `gemm`'s
    /// transposed and padded copies of the operands (kept so that calls of the same size do
    /// not allocate again; at most eight buffers, the most recent).
    pub fn free_workspace(&self) {
        let kept = std::mem::take(
            &mut *self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        // Freed outside the lock: a CUDA buffer's drop waits for the queue.
        drop(kept);
    }

    /// A buffer of `len` elements for a routine's own use: one an earlier call gave back
    /// ([`Library::keep`]) of the same type and length, else a new one; contents unspecified.
    /// Launches on it are ordered after the earlier call's: the routines launch on one queue.
    fn workspace<T: Scalar + 'static>(&self, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let mut pool = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let fits = |b: &Box<dyn Any + Send>| {
            b.downcast_ref::<DeviceBuffer<T>>()
                .is_some_and(|b| b.len() == len)
        };
        if let Some(i) = pool.iter().rposition(fits) {
            if let Ok(buffer) = pool.remove(i).downcast::<DeviceBuffer<T>>() {
                return Ok(*buffer);
            }
        }
        drop(pool);
        Ok(DeviceBuffer::<T>::new(self.device.as_ref(), len)?)
    }

    /// Gives buffers of [`Library::workspace`] back for later calls (the most recent
    /// [`WORKSPACE_KEEP`] are kept).
    fn keep<T: Scalar + 'static>(&self, buffers: impl IntoIterator<Item = DeviceBuffer<T>>) {
        let mut pool = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        pool.extend(
            buffers
                .into_iter()
                .map(|b| Box::new(b) as Box<dyn Any + Send>),
        );
        let excess = pool.len().saturating_sub(WORKSPACE_KEEP);
        let evicted: Vec<_> = pool.drain(..excess).collect();
        // Freed outside the lock: a CUDA buffer's drop waits for the queue.
        drop(pool);
        drop(evicted);
    }

    /// Uses `dir` as the application's wisdom directory (searched after `KW_WISDOM_PATH`).
    pub fn with_wisdom_dir(mut self, dir: impl Into<PathBuf>) -> Library {
        self.wisdom_dir = Some(dir.into());
        self
    }

    /// The device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The bound kernel of routine `name` (built at its first use; `convolution`: the one of
    /// the [`defs::CONVOLUTION_FILTER`] shape, [`Library::convolution_kernel`] the others).
    pub fn kernel(&self, name: &str) -> Result<Arc<WisdomKernel>, Error> {
        if name == "convolution" {
            return self.convolution_kernel(defs::CONVOLUTION_FILTER);
        }
        let Some(&key) = defs::KERNELS
            .iter()
            .chain(defs::HELPERS)
            .find(|&&k| k == name)
        else {
            return Err(Error::Shape {
                routine: "library",
                message: format!(
                    "no library kernel `{name}` (kernels: {})",
                    defs::KERNELS.join(", ")
                ),
            });
        };
        let mut map = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = map.get(key) {
            return Ok(Arc::clone(k));
        }
        let def = defs::definition(key, self.device.info().backend)?;
        let kernel = Arc::new(self.bind(key, def)?);
        map.insert(key, Arc::clone(&kernel));
        Ok(kernel)
    }

    /// Library kernel `name`'s definition bound to the device, with its shipped wisdom and
    /// the library's wisdom directory.
    fn bind(&self, name: &str, def: kw_core::kernel_def::KernelDef) -> Result<WisdomKernel, Error> {
        let mut kernel = WisdomKernel::new(def, Arc::clone(&self.device))?;
        if let Some(json) = defs::shipped_wisdom(name) {
            kernel = kernel.with_embedded_wisdom(&format!("embedded:kw_{name}.json"), json);
        }
        if let Some(dir) = &self.wisdom_dir {
            kernel = kernel.with_wisdom_dir(dir);
        }
        Ok(kernel)
    }

    /// `output` (cols x rows) = the transpose of `input` (rows x cols, row-major).
    pub fn transpose(
        &self,
        rows: usize,
        cols: usize,
        input: &DeviceBuffer<f32>,
        output: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        self.transpose_of(rows, cols, input, output)
    }

    /// [`Library::transpose`] for the element type the kernel takes (f32; another is refused
    /// by the launch's argument check).
    fn transpose_of<T: kw_core::scalar::Scalar>(
        &self,
        rows: usize,
        cols: usize,
        input: &DeviceBuffer<T>,
        output: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        const R: &str = "transpose";
        let n = rows.checked_mul(cols).ok_or_else(|| Error::Shape {
            routine: R,
            message: format!("{rows} x {cols} elements overflow"),
        })?;
        expect_len(R, "input (rows x cols)", input.len(), n)?;
        expect_len(R, "output (cols x rows)", output.len(), n)?;
        separate(
            R,
            &[("output", output.memory())],
            &[("input", input.memory())],
        )?;
        let (r, c) = (int(R, "rows", rows)?, int(R, "cols", cols)?);
        self.kernel(R)?
            .launch(&[output.arg(), input.arg(), r.into(), c.into()])
    }

    /// The sum of `input`'s elements (accumulated in f32 per thread, then per block; waits
    /// for the result).
    pub fn sum(&self, input: &DeviceBuffer<f32>) -> Result<f32, Error> {
        const R: &str = "sum";
        let n = int(R, "the input's length", input.len())?;
        let mut slot = self.scalar.lock().unwrap_or_else(PoisonError::into_inner);
        let out = match slot.take() {
            Some(b) => b,
            None => DeviceBuffer::new(self.device.as_ref(), 1)?,
        };
        out.fill(0.0)?;
        self.kernel("reduce_sum")?
            .launch(&[out.arg(), input.arg(), n.into()])?;
        let v = out.to_vec()?[0];
        *slot = Some(out);
        Ok(v)
    }

    /// `output` = the 7-point stencil of `input` on an nx x ny x nz grid (x fastest):
    /// `c0 * centre + c1 * (six neighbours)`, boundary cells copied.
    pub fn stencil3d(
        &self,
        [nx, ny, nz]: [usize; 3],
        c0: f32,
        c1: f32,
        input: &DeviceBuffer<f32>,
        output: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        const R: &str = "stencil3d";
        let n = nx
            .checked_mul(ny)
            .and_then(|p| p.checked_mul(nz))
            .ok_or_else(|| Error::Shape {
                routine: R,
                message: format!("{nx} x {ny} x {nz} cells overflow"),
            })?;
        expect_len(R, "input (nx x ny x nz)", input.len(), n)?;
        expect_len(R, "output (nx x ny x nz)", output.len(), n)?;
        separate(
            R,
            &[("output", output.memory())],
            &[("input", input.memory())],
        )?;
        let (x, y, z) = (int(R, "nx", nx)?, int(R, "ny", ny)?, int(R, "nz", nz)?);
        self.kernel(R)?.launch(&[
            output.arg(),
            input.arg(),
            x.into(),
            y.into(),
            z.into(),
            c0.into(),
            c1.into(),
        ])
    }
}
