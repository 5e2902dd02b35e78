//! IEEE 754 half precision (binary16) as its bits in a `u16` (Rust has no stable `f16`):
//! what `Library::gemm_f16` takes. Conversions round to nearest, ties to even (as the GPU's
//! `cvt.rn.f16.f32`), keep infinities, NaN (quiet) and subnormals.

/// The half nearest to `x` (ties to even), as its bits. Beyond the largest half (65504)
/// rounds to infinity, as IEEE.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x007f_ffff;
    if exp == 0xff {
        // Infinity, or NaN (kept quiet, with the top of its payload).
        let nan = if man != 0 {
            0x0200 | (man >> 13) as u16
        } else {
            0
        };
        return sign | 0x7c00 | nan;
    }
    // The value is 1.man x 2^(exp - 127); half's exponent bias is 15.
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // Subnormal half (or zero): the significand with its implicit 1, shifted.
        if e < -10 {
            return sign; // below half the smallest subnormal: zero
        }
        let full = man | 0x0080_0000;
        let shift = (14 - e) as u32;
        let half = full >> shift;
        let rest = full & ((1 << shift) - 1);
        let midpoint = 1 << (shift - 1);
        let up = rest > midpoint || (rest == midpoint && half & 1 == 1);
        return sign | (half + u32::from(up)) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    let up = rest > 0x1000 || (rest == 0x1000 && half & 1 == 1);
    // A carry out of the significand steps the exponent, up to infinity: still right.
    sign | (half + u32::from(up)) as u16
}

/// The value of the half with bits `h` (exact: every half is an f32).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x03ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: man x 2^-24, normalised for f32.
            let v = man as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        for (x, h) in [
            (0.0f32, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.5, 0x3800),
            (65504.0, 0x7bff),
            (f32::INFINITY, 0x7c00),
            (f32::NEG_INFINITY, 0xfc00),
            (6.103_515_6e-5, 0x0400), // the smallest normal, 2^-14
            (5.960_464_5e-8, 0x0001), // the smallest subnormal, 2^-24
            (0.333_251_95, 0x3555),   // the half nearest 1/3
        ] {
            assert_eq!(f32_to_f16_bits(x), h, "{x}");
            assert_eq!(f16_bits_to_f32(h), x, "{h:#06x}");
        }
        assert!(f16_bits_to_f32(f32_to_f16_bits(f32::NAN)).is_nan());
        // Beyond the largest half, and past its rounding midpoint: infinity.
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00);
        assert_eq!(f32_to_f16_bits(65519.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(1e-9), 0);
        assert_eq!(f32_to_f16_bits(1.0 / 3.0), 0x3555);
    }

    /// Every half converts to an f32 and back to itself (NaNs to a NaN).
    #[test]
    fn every_half_round_trips() {
        for h in 0..=u16::MAX {
            let x = f16_bits_to_f32(h);
            if x.is_nan() {
                assert!((h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0, "{h:#06x}");
                assert!(f16_bits_to_f32(f32_to_f16_bits(x)).is_nan());
            } else {
                assert_eq!(f32_to_f16_bits(x), h, "{h:#06x} = {x}");
            }
        }
    }

    /// Between two neighbouring halves: below the midpoint down, above up, at it to the even
    /// one; in the normal and the subnormal range, both signs.
    #[test]
    fn rounds_to_nearest_ties_to_even() {
        for h in [0x0001u16, 0x0002, 0x03fe, 0x0400, 0x3c00, 0x3c01, 0x7bfe] {
            for sign in [0u16, 0x8000] {
                let (lo, hi) = (h | sign, (h + 1) | sign);
                let (a, b) = (
                    f64::from(f16_bits_to_f32(lo)),
                    f64::from(f16_bits_to_f32(hi)),
                );
                let mid = (a + b) / 2.0;
                let near = |t: f64| f32_to_f16_bits(t as f32);
                assert_eq!(near(mid + (b - a) / 8.0), hi, "{lo:#06x}");
                assert_eq!(near(mid - (b - a) / 8.0), lo, "{lo:#06x}");
                let even = if lo & 1 == 0 { lo } else { hi };
                assert_eq!(near(mid), even, "{lo:#06x}: the midpoint {mid}");
            }
        }
    }
}
