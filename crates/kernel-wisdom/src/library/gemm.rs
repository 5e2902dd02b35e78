//! `Library::gemm`: C = alpha A B + beta C in single precision, column-major, any sizes.
//!
//! The kernel (`kernels/library/gemm.cl`, CLBlast's Xgemm scheme) reads B as its transpose
//! and has no bounds checks, like CLBlast's. So the routine, like CLBlast's, prepares its
//! operands: B is transposed with the library's tuned transpose, and a size that is not a
//! multiple of [`defs::GEMM_PAD`] is padded with zeros (`copy_pad`) and the result cut back
//! out of the padded C. At sizes the pads divide (4096, 1024, 8192 x 8192 x 256, ...), A and C
//! are used in place and only B's transpose is extra work.

use super::{defs, expect_len, int, Library};
use crate::error::Error;
use kw_core::buffer::DeviceBuffer;
use std::sync::PoisonError;

const R: &str = "gemm";

/// Split-K's zeroed scratch for a padded (M, N): the kernel's `work` and `counts`.
pub(super) type GemmScratch = ([usize; 2], DeviceBuffer<f32>, DeviceBuffer<i32>);

/// `v` rounded up to a multiple of `to` (at least `to`: a K of 0 becomes one zero tile).
fn round_up(v: usize, to: usize) -> Result<usize, Error> {
    v.max(1)
        .div_ceil(to)
        .checked_mul(to)
        .ok_or_else(|| Error::Shape {
            routine: R,
            message: format!("{v} overflows when padded to a multiple of {to}"),
        })
}

/// `a * b` elements, or [`Error::Shape`] naming them.
fn elements(a: usize, b: usize, what: &str) -> Result<usize, Error> {
    super::elements(R, a, b, what)
}

impl Library {
    /// `c` = `alpha` `a` `b` + `beta` `c`, with `a` m x k, `b` k x n and `c` m x n, all
    /// column-major (element (i, j) of an r-row matrix at `j * r + i`). Any sizes; `beta` 0
    /// ignores `c`'s contents (NaN included). Wrong lengths are [`Error::Shape`].
    #[allow(clippy::too_many_arguments)] // BLAS's signature: sizes, scalars and operands
    pub fn gemm(
        &self,
        [m, n, k]: [usize; 3],
        alpha: f32,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        beta: f32,
        c: &DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        expect_len(R, "a (m x k)", a.len(), elements(m, k, "a")?)?;
        expect_len(R, "b (k x n)", b.len(), elements(k, n, "b")?)?;
        expect_len(R, "c (m x n)", c.len(), elements(m, n, "c")?)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let [pm, pn, pk] = defs::GEMM_PAD;
        let (mp, np, kp) = (round_up(m, pm)?, round_up(n, pn)?, round_up(k, pk)?);
        let device = self.device.as_ref();
        // B (k x n column-major: n rows of k as row-major) transposed: k rows of n.
        let bt = DeviceBuffer::<f32>::new(device, elements(k, n, "b")?)?;
        if k > 0 {
            self.transpose(n, k, b, &bt)?;
        }
        let pad = |input: &DeviceBuffer<f32>, rows: usize, cols: usize, rows_p, cols_p| {
            if (rows, cols) == (rows_p, cols_p) {
                return Ok(None);
            }
            let out = DeviceBuffer::<f32>::new(device, elements(rows_p, cols_p, "padded")?)?;
            self.copy_pad(&out, [rows_p, cols_p], input, [rows, cols])?;
            Ok::<_, Error>(Some(out))
        };
        // Column-major A (m x k) is k rows of m; B^T is k rows of n; C is n rows of m.
        let a_p = pad(a, k, m, kp, mp)?;
        let b_p = pad(&bt, k, n, kp, np)?;
        let c_p = if (m, n) == (mp, np) {
            None
        } else if beta == 0.0 {
            Some(DeviceBuffer::<f32>::new(
                device,
                elements(np, mp, "padded c")?,
            )?)
        } else {
            pad(c, n, m, np, mp)?
        };
        let (cm, cn, ck) = (int(R, "m", mp)?, int(R, "n", np)?, int(R, "k", kp)?);
        let c_use = c_p.as_ref().unwrap_or(c);
        // Split-K's scratch: zeroed once, left zeroed by every launch, kept for the next
        // call of the same (padded) size; held while the launch is queued.
        let mut scratch = self
            .gemm_scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (work, counts) = match scratch.take() {
            Some(s) if s.0 == [mp, np] => (s.1, s.2),
            _ => {
                let (wl, cl) = defs::gemm_scratch_lens(mp, np);
                let work = DeviceBuffer::<f32>::new(device, wl)?;
                work.fill(0.0)?;
                let counts = DeviceBuffer::<i32>::new(device, cl)?;
                counts.fill(0)?;
                (work, counts)
            }
        };
        let launched = self.kernel(R)?.launch(&[
            c_use.arg(),
            a_p.as_ref().unwrap_or(a).arg(),
            b_p.as_ref().unwrap_or(&bt).arg(),
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
            *scratch = Some(([mp, np], work, counts));
        }
        drop(scratch);
        launched?;
        if let Some(padded) = &c_p {
            self.copy_pad(c, [n, m], padded, [np, mp])?;
        }
        Ok(())
    }

    /// `out` (`rows_out` x `cols_out`, row-major) = `input`'s corner, zero where `input` has
    /// no element.
    fn copy_pad(
        &self,
        out: &DeviceBuffer<f32>,
        [rows_out, cols_out]: [usize; 2],
        input: &DeviceBuffer<f32>,
        [rows_in, cols_in]: [usize; 2],
    ) -> Result<(), Error> {
        const P: &str = "copy_pad";
        self.kernel(P)?.launch(&[
            out.arg(),
            input.arg(),
            int(P, "rows", rows_out)?.into(),
            int(P, "cols", cols_out)?.into(),
            int(P, "rows", rows_in)?.into(),
            int(P, "cols", cols_in)?.into(),
        ])
    }
}
