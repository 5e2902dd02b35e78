//! `Library::gemm` and `Library::gemm_f16`: C = alpha A B + beta C, column-major, any sizes,
//! in single precision or (CUDA) on IEEE half matrices.
//!
//! The f32 kernel (`kernels/library/gemm.cl`, CLBlast's Xgemm scheme) reads B as its
//! transpose and has no bounds checks, like CLBlast's; the f16 one
//! (`kernels/library/gemm_f16_tc.cu`, tensor cores) reads B as it is and checks bounds per 8
//! elements. So the routine, like CLBlast's, prepares the operands: for f32, B is transposed
//! (with the library's tuned transpose); and a size that is not a multiple of the precision's
//! pad ([`defs::GEMM_PAD`], [`defs::GEMM_F16_PAD`]) is padded with zeros (`copy_pad`) and the
//! result cut back out of the padded C. At sizes the pads divide (4096, 1024, 8192 x 8192 x
//! 256, ...), A and C are used in place (and f16's B): only f32's transpose of B is extra
//! work. Split-K's scratch (`work`, `counts`: zero before and after every
//! launch) is kept for the next call of the same padded size.

use super::{defs, expect_len, int, Library};
use crate::error::Error;
use kw_core::buffer::DeviceBuffer;
use kw_core::device::BackendKind;
use kw_core::scalar::Scalar;
use std::sync::PoisonError;

/// Split-K's zeroed scratch for a padded (M, N): the kernel's `work` and `counts`.
pub(super) type GemmScratch = ([usize; 2], DeviceBuffer<f32>, DeviceBuffer<i32>);

/// What differs between the precisions: the kernels' names, B's layout and the padding.
struct Precision {
    routine: &'static str,
    copy_pad: &'static str,
    /// Whether the kernel's space has split-K (its scratch sized for it).
    split_k: bool,
    /// The kernel reads B^T (made by the library's tuned transpose, then padded), else B as
    /// it is (padded where needed).
    b_transposed: bool,
    /// The multiples M, N and K are padded to when they are not already.
    pad: [usize; 3],
}

const F32: Precision = Precision {
    routine: "gemm",
    copy_pad: "copy_pad",
    split_k: true,
    b_transposed: true,
    pad: defs::GEMM_PAD,
};

const F16: Precision = Precision {
    routine: "gemm_f16",
    copy_pad: "copy_pad_f16",
    split_k: false,
    b_transposed: false,
    pad: defs::GEMM_F16_PAD,
};

/// `v` rounded up to a multiple of `to` (at least `to`: a K of 0 becomes one zero tile).
fn round_up(routine: &'static str, v: usize, to: usize) -> Result<usize, Error> {
    v.max(1)
        .div_ceil(to)
        .checked_mul(to)
        .ok_or_else(|| Error::Shape {
            routine,
            message: format!("{v} overflows when padded to a multiple of {to}"),
        })
}

impl Library {
    /// `c` = `alpha` `a` `b` + `beta` `c`, with `a` m x k, `b` k x n and `c` m x n, all
    /// column-major (element (i, j) of an r-row matrix at `j * r + i`). Any sizes; `beta` 0
    /// ignores `c`'s contents (NaN included), and `alpha` 0 those of `a` and `b` (as BLAS: `c`
    /// = `beta` `c`). Wrong lengths are [`Error::Shape`]; `c` sharing memory with `a` or `b`
    /// too. At sizes
    /// the kernel's tiles do not divide, the operands are copied into padded buffers, which
    /// the `Library` keeps for later calls ([`Library::free_workspace`] frees them).
    #[allow(clippy::too_many_arguments)] // BLAS's signature: sizes, scalars and operands
    pub fn gemm(
        &self,
        shape: [usize; 3],
        alpha: f32,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        beta: f32,
        c: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        self.gemm_of(&F32, shape, alpha, a, b, beta, c)
    }

    /// [`Library::gemm`] on IEEE half matrices, given as their bits (`u16`: Rust has no
    /// stable `f16`; [`super::half`] converts): the products are summed in f32 and each
    /// element of C rounded to half once, at the end (CLBlast's and cuBLAS's HGEMM sum in
    /// half; f32 keeps the error of a long K at one rounding). `alpha` and `beta` are f32.
    /// CUDA only: on another backend [`Error::Unsupported`], nothing launched.
    #[allow(clippy::too_many_arguments)] // BLAS's signature: sizes, scalars and operands
    pub fn gemm_f16(
        &self,
        shape: [usize; 3],
        alpha: f32,
        a: &DeviceBuffer<u16>,
        b: &DeviceBuffer<u16>,
        beta: f32,
        c: &DeviceBuffer<u16>,
    ) -> Result<(), Error> {
        let backend = self.device.info().backend;
        if backend != BackendKind::Cuda {
            return Err(Error::Unsupported {
                routine: F16.routine,
                only: BackendKind::Cuda,
                device: backend,
            });
        }
        self.gemm_of(&F16, shape, alpha, a, b, beta, c)
    }

    #[allow(clippy::too_many_arguments)]
    fn gemm_of<T: Scalar + 'static>(
        &self,
        p: &Precision,
        [m, n, k]: [usize; 3],
        alpha: f32,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        beta: f32,
        c: &DeviceBuffer<T>,
    ) -> Result<(), Error> {
        let r = p.routine;
        let elements = |x: usize, y: usize, what: &str| super::elements(r, x, y, what);
        expect_len(r, "a (m x k)", a.len(), elements(m, k, "a")?)?;
        expect_len(r, "b (k x n)", b.len(), elements(k, n, "b")?)?;
        expect_len(r, "c (m x n)", c.len(), elements(m, n, "c")?)?;
        super::separate(
            r,
            &[("c", c.memory())],
            &[("a", a.memory()), ("b", b.memory())],
        )?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        if alpha == 0.0 || k == 0 {
            // As BLAS: C = beta C, and A and B are not read (a NaN there stays out of C). The
            // kernel runs over one K tile of zeros (a launch with K = 0 would be empty).
            let kz = p.pad[2];
            let zeros = |len| {
                let z = self.workspace::<T>(len)?;
                z.memory().fill_zero()?;
                Ok::<_, Error>(z)
            };
            let (za, zb) = (zeros(elements(m, kz, "a")?)?, zeros(elements(kz, n, "b")?)?);
            let done = self.gemm_of(p, [m, n, kz], 1.0, &za, &zb, beta, c);
            self.keep([za, zb]);
            return done;
        }
        let [pm, pn, pk] = p.pad;
        let (mp, np, kp) = (
            round_up(r, m, pm)?,
            round_up(r, n, pn)?,
            round_up(r, k, pk)?,
        );
        let device = self.device.as_ref();
        // The kernels load A (and the f16 one B) 16 bytes at a time (f32: `float4` for VWM 4;
        // f16: `cp.async` of 16 bytes), which needs a 16-byte aligned start: an application's
        // memory (a CUDA pointer into an array) may start anywhere, and is then copied.
        let aligned = |x: &DeviceBuffer<T>| {
            x.memory()
                .device_address()
                .is_none_or(|address| address % 16 == 0)
        };
        let pad = |input: &DeviceBuffer<T>, rows: usize, cols: usize, rows_p, cols_p| {
            if (rows, cols) == (rows_p, cols_p) && aligned(input) {
                return Ok(None);
            }
            let out = self.workspace::<T>(elements(rows_p, cols_p, "padded")?)?;
            self.copy_pad(
                p.copy_pad,
                &out,
                [rows_p, cols_p],
                input,
                [rows, cols],
                false,
            )?;
            Ok::<_, Error>(Some(out))
        };
        // B (k x n column-major: n rows of k as row-major), for the f32 kernel transposed: k
        // rows of n, padded to kp rows of np; else padded to np rows of kp.
        let b_t = if p.b_transposed {
            let bt = self.workspace::<T>(elements(k, n, "b")?)?;
            if k > 0 {
                self.transpose_of(n, k, b, &bt)?;
            }
            Some(match pad(&bt, k, n, kp, np)? {
                Some(padded) => {
                    self.keep([bt]);
                    padded
                }
                None => bt,
            })
        } else {
            pad(b, n, k, np, kp)?
        };
        // Column-major A (m x k) is k rows of m; C is n rows of m.
        let a_p = pad(a, k, m, kp, mp)?;
        let c_p = if (m, n) == (mp, np) {
            None
        } else if beta == 0.0 {
            Some(self.workspace::<T>(elements(np, mp, "padded c")?)?)
        } else {
            pad(c, n, m, np, mp)?
        };
        let (cm, cn, ck) = (int(r, "m", mp)?, int(r, "n", np)?, int(r, "k", kp)?);
        let c_use = c_p.as_ref().unwrap_or(c);
        // Split-K's scratch: zeroed once, left zeroed by every launch, kept for the next
        // call of the same (padded) size; held while the launch is queued.
        // Without split-K any scratch will do, and it keeps the size it was made for.
        let mut scratch = self
            .gemm_scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (made_for, work, counts) = match scratch.take() {
            Some(s) if s.0 == [mp, np] || !p.split_k => s,
            _ => {
                let (wl, cl) = if p.split_k {
                    defs::gemm_scratch_lens(mp, np)
                } else {
                    (1, 1)
                };
                let work = DeviceBuffer::<f32>::new(device, wl)?;
                work.fill(0.0)?;
                let counts = DeviceBuffer::<i32>::new(device, cl)?;
                counts.fill(0)?;
                // (A one-element pair is made for no size: [0, 0], which no f32 call pads to.)
                let made_for = if p.split_k { [mp, np] } else { [0, 0] };
                (made_for, work, counts)
            }
        };
        let launched = self.kernel(r)?.launch(&[
            c_use.arg(),
            a_p.as_ref().unwrap_or(a).arg(),
            b_t.as_ref().unwrap_or(b).arg(),
            cm.into(),
            cn.into(),
            ck.into(),
            alpha.into(),
            beta.into(),
            work.arg(),
            counts.arg(),
        ]);
        // A failed launch may leave them dirty: allocated afresh next time.
        if launched.is_ok() {
            *scratch = Some((made_for, work, counts));
        }
        drop(scratch);
        launched?;
        if let Some(padded) = &c_p {
            self.copy_pad(p.copy_pad, c, [n, m], padded, [np, mp], false)?;
        }
        // For the next call: one of the same size then allocates nothing.
        self.keep([b_t, a_p, c_p].into_iter().flatten());
        Ok(())
    }

    /// `out` (`rows_out` x `cols_out`, row-major) = `input`'s corner (with `transposed`, of
    /// its transpose), zero where `input` has no element; `name` the helper of the precision.
    fn copy_pad<T: Scalar>(
        &self,
        name: &'static str,
        out: &DeviceBuffer<T>,
        [rows_out, cols_out]: [usize; 2],
        input: &DeviceBuffer<T>,
        [rows_in, cols_in]: [usize; 2],
        transposed: bool,
    ) -> Result<(), Error> {
        self.kernel(name)?.launch(&[
            out.arg(),
            input.arg(),
            int(name, "rows", rows_out)?.into(),
            int(name, "cols", cols_out)?.into(),
            int(name, "rows", rows_in)?.into(),
            int(name, "cols", cols_in)?.into(),
            i32::from(transposed).into(),
        ])
    }
}
