//! Comparing a configuration's output with the captured reference: integers exactly, floats
//! within the buffer's [`Tolerance`], scaled by the output's magnitude (the rule is written
//! down in [`kw_core::tolerance`]); NaN equals NaN unless the tolerance says
//! `nan_is_error`. The device comparison ([`crate::device_verify`]) has the same semantics.

use kw_core::scalar::ScalarType;
pub use kw_core::tolerance::{Tolerance, ToleranceOverride};

/// How a buffer differs from its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Elements that differ.
    pub count: usize,
    /// Elements compared.
    pub len: usize,
    /// The first differing element: index, value, expected value (as text).
    pub first: (usize, String, String),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (i, got, want) = &self.first;
        write!(
            f,
            "{} of {} elements differ, first at [{i}]: got {got}, expected {want}",
            self.count, self.len
        )
    }
}

/// Whether a float result matches: equal, both NaN (when NaN equals NaN), or within `bound`.
fn floats_close(got: f64, want: f64, bound: f64, nan_equal: bool) -> bool {
    if got.is_nan() || want.is_nan() {
        return nan_equal && got.is_nan() && want.is_nan();
    }
    if got == want {
        return true; // equal infinities too
    }
    (got - want).abs() <= bound
}

/// The output's magnitude: the largest finite `|x|` of a buffer of floats (raw bytes of
/// elements of `ty`); 0 for integers and for buffers without a finite element.
pub fn magnitude(ty: ScalarType, bytes: &[u8]) -> f64 {
    fn max_abs<T: bytemuck::Pod>(bytes: &[u8], as_f64: impl Fn(T) -> f64) -> f64 {
        let size = std::mem::size_of::<T>();
        (0..bytes.len() / size)
            .map(|i| {
                as_f64(bytemuck::pod_read_unaligned(
                    &bytes[i * size..(i + 1) * size],
                ))
            })
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs()))
    }
    match ty {
        ScalarType::F32 => max_abs::<f32>(bytes, f64::from),
        ScalarType::F64 => max_abs::<f64>(bytes, |x| x),
        _ => 0.0,
    }
}

fn compare_as<T: bytemuck::Pod + std::fmt::Debug>(
    got: &[u8],
    want: &[u8],
    same: impl Fn(T, T) -> bool,
) -> Option<Mismatch> {
    let size = std::mem::size_of::<T>();
    let n = got.len().min(want.len()) / size;
    let mut count = 0usize;
    let mut first = None;
    for i in 0..n {
        let g: T = bytemuck::pod_read_unaligned(&got[i * size..(i + 1) * size]);
        let w: T = bytemuck::pod_read_unaligned(&want[i * size..(i + 1) * size]);
        if !same(g, w) {
            count += 1;
            first.get_or_insert((i, format!("{g:?}"), format!("{w:?}")));
        }
    }
    if got.len() != want.len() {
        return Some(Mismatch {
            count: count.max(1),
            len: n,
            first: first.unwrap_or((
                n,
                format!("{} bytes", got.len()),
                format!("{} bytes", want.len()),
            )),
        });
    }
    first.map(|first| Mismatch {
        count,
        len: n,
        first,
    })
}

/// What a comparison of equal-length buffers finds: the same three numbers the device-side
/// comparison ([`crate::device_verify`]) computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Elements that differ.
    pub count: u64,
    /// The first element that differs.
    pub first: Option<u64>,
    /// The largest `|got - want|` (in `f64`) over elements where neither is NaN (0 when all
    /// are equal).
    pub max_error: f64,
}

fn summarise_as<T: bytemuck::Pod>(
    got: &[u8],
    want: &[u8],
    same: impl Fn(T, T) -> bool,
    as_f64: impl Fn(T) -> f64,
) -> Summary {
    let size = std::mem::size_of::<T>();
    let n = got.len().min(want.len()) / size;
    let mut out = Summary {
        count: 0,
        first: None,
        max_error: 0.0,
    };
    for i in 0..n {
        let g: T = bytemuck::pod_read_unaligned(&got[i * size..(i + 1) * size]);
        let w: T = bytemuck::pod_read_unaligned(&want[i * size..(i + 1) * size]);
        let (gd, wd) = (as_f64(g), as_f64(w));
        if !gd.is_nan() && !wd.is_nan() && gd != wd {
            out.max_error = out.max_error.max((gd - wd).abs());
        }
        if !same(g, w) {
            out.count += 1;
            out.first.get_or_insert(i as u64);
        }
    }
    out
}

/// Counts the differing elements of `got` and `want` (raw bytes of elements of `ty`, compared
/// over the shorter length), the first of them and the largest error, with the semantics of
/// [`compare`].
pub fn summarise(ty: ScalarType, got: &[u8], want: &[u8], tol: Tolerance) -> Summary {
    let bound = tol.bound(magnitude(ty, want));
    let nan_equal = tol.nan_equal();
    macro_rules! int {
        ($t:ty) => {
            summarise_as::<$t>(got, want, |g, w| g == w, |v| v as f64)
        };
    }
    match ty {
        ScalarType::F32 => summarise_as::<f32>(
            got,
            want,
            |g, w| floats_close(g.into(), w.into(), bound, nan_equal),
            f64::from,
        ),
        ScalarType::F64 => summarise_as::<f64>(
            got,
            want,
            |g, w| floats_close(g, w, bound, nan_equal),
            |v| v,
        ),
        ScalarType::I8 => int!(i8),
        ScalarType::U8 => int!(u8),
        ScalarType::I16 => int!(i16),
        ScalarType::U16 => int!(u16),
        ScalarType::I32 => int!(i32),
        ScalarType::U32 => int!(u32),
        ScalarType::I64 => int!(i64),
        ScalarType::U64 => int!(u64),
    }
}

/// Compares `got` with `want`, both raw bytes of elements of `ty`, with `tol` scaled by
/// `want`'s magnitude. `None` when they match.
pub fn compare(ty: ScalarType, got: &[u8], want: &[u8], tol: Tolerance) -> Option<Mismatch> {
    let bound = tol.bound(magnitude(ty, want));
    let nan_equal = tol.nan_equal();
    let close = |g: f64, w: f64| floats_close(g, w, bound, nan_equal);
    match ty {
        ScalarType::F32 => compare_as::<f32>(got, want, |g, w| close(g.into(), w.into())),
        ScalarType::F64 => compare_as::<f64>(got, want, close),
        ScalarType::I8 => compare_as::<i8>(got, want, |g, w| g == w),
        ScalarType::U8 => compare_as::<u8>(got, want, |g, w| g == w),
        ScalarType::I16 => compare_as::<i16>(got, want, |g, w| g == w),
        ScalarType::U16 => compare_as::<u16>(got, want, |g, w| g == w),
        ScalarType::I32 => compare_as::<i32>(got, want, |g, w| g == w),
        ScalarType::U32 => compare_as::<u32>(got, want, |g, w| g == w),
        ScalarType::I64 => compare_as::<i64>(got, want, |g, w| g == w),
        ScalarType::U64 => compare_as::<u64>(got, want, |g, w| g == w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    #[test]
    fn floats_within_tolerance_integers_exact() {
        let t = Tolerance::default();
        let a = bytes(&[1.0f32, 2.0, 3.0]);
        let b = bytes(&[1.0f32, 2.000001, 3.0]);
        assert!(compare(ScalarType::F32, &a, &b, t).is_none());
        let c = bytes(&[1.0f32, 2.1, 3.5]);
        let m = compare(ScalarType::F32, &c, &a, t).unwrap();
        assert_eq!(m.count, 2);
        assert_eq!(m.first.0, 1);
        let inf = bytes(&[f64::INFINITY]);
        assert!(compare(ScalarType::F64, &inf, &inf, t).is_none());
        let i = bytes(&[1i32, 2]);
        let j = bytes(&[1i32, 3]);
        assert!(compare(ScalarType::I32, &i, &i, t).is_none());
        assert!(compare(ScalarType::I32, &i, &j, t).is_some());
        assert!(compare(ScalarType::I32, &i, &i[..4], t).is_some());
        assert!(compare(ScalarType::F32, &b, &a, Tolerance::exact()).is_some());
    }

    #[test]
    fn nan_equals_nan_unless_asked_otherwise() {
        let t = Tolerance::default();
        let nan = bytes(&[1.0f32, f32::NAN]);
        let one = bytes(&[1.0f32, 1.0]);
        assert!(compare(ScalarType::F32, &nan, &nan, t).is_none());
        assert!(compare(ScalarType::F32, &nan, &one, t).is_some());
        assert!(compare(ScalarType::F32, &one, &nan, t).is_some());
        let strict = Tolerance {
            nan_is_error: true,
            ..t
        };
        let m = compare(ScalarType::F32, &nan, &nan, strict).unwrap();
        assert_eq!((m.count, m.first.0), (1, 1));
        assert_eq!(summarise(ScalarType::F32, &nan, &nan, t).count, 0);
        assert_eq!(summarise(ScalarType::F32, &nan, &nan, strict).count, 1);
    }

    /// Scaled by the output's magnitude: an element that cancels to a small value may carry
    /// the rounding error of the large ones; one wrong element among 16,384 still fails.
    #[test]
    fn the_output_magnitude_scales_the_tolerance() {
        let mut want = vec![0f32; 16_384];
        for (i, w) in want.iter_mut().enumerate() {
            *w = ((i * 7919) % 3401) as f32 / 100.0 - 17.0; // up to 17 in magnitude
        }
        want[5] = -0.0848;
        let mut got = want.clone();
        got[5] = -0.0848 + 2e-6; // what a re-associated sum gives
        let t = Tolerance::default();
        assert!(compare(ScalarType::F32, &bytes(&got), &bytes(&want), t).is_none());
        got[9000] += 0.01; // one wrong element
        let m = compare(ScalarType::F32, &bytes(&got), &bytes(&want), t).unwrap();
        assert_eq!((m.count, m.first.0), (1, 9000));
        assert!((magnitude(ScalarType::F32, &bytes(&want)) - 17.0).abs() < 0.1);
    }
}
