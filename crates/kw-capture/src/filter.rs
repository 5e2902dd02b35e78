//! The byte-shuffle filter: before compression, byte `k` of every element of a chunk is
//! grouped together (all first bytes, then all second bytes, ...). For smooth numeric data the
//! exponent and high mantissa bytes then form long, nearly constant runs that zstd compresses
//! well and fast; raw float bytes interleave them with noisy low bytes and barely compress.
//!
//! Recorded per frame in the header as `"filter": "shuffle2" | "shuffle4" | "shuffle8"`;
//! absent means no filter (files written before the filter existed read unchanged). A chunk's
//! trailing bytes that do not fill a whole element are stored unshuffled after the shuffled
//! part.

/// The header name of the shuffle filter for elements of `width` bytes.
pub(crate) fn filter_name(width: usize) -> String {
    format!("shuffle{width}")
}

/// The element width of a filter name from a header; `Err` for a name this reader does not
/// know.
pub(crate) fn parse_filter(name: &str) -> Result<usize, String> {
    match name {
        "shuffle2" => Ok(2),
        "shuffle4" => Ok(4),
        "shuffle8" => Ok(8),
        _ => Err(format!("unknown filter `{name}`")),
    }
}

/// The shuffle width for a buffer's element type (`f32` -> 4), `None` for one-byte or
/// unknown types (stored unfiltered).
pub(crate) fn shuffle_width(elem_type: &str) -> Option<usize> {
    match elem_type {
        "i16" | "u16" | "f16" | "bf16" => Some(2),
        "i32" | "u32" | "f32" => Some(4),
        "i64" | "u64" | "f64" => Some(8),
        _ => None,
    }
}

/// Shuffles `src` (elements of `width` bytes) into `dst` (cleared first).
pub(crate) fn shuffle(src: &[u8], width: usize, dst: &mut Vec<u8>) {
    dst.clear();
    dst.resize(src.len(), 0);
    match width {
        2 => transpose::<2>(src, dst, true),
        4 => transpose::<4>(src, dst, true),
        8 => transpose::<8>(src, dst, true),
        _ => dst.copy_from_slice(src),
    }
}

/// Undoes [`shuffle`]: `src` and `dst` have the same length.
pub(crate) fn unshuffle(src: &[u8], width: usize, dst: &mut [u8]) {
    match width {
        2 => transpose::<2>(src, dst, false),
        4 => transpose::<4>(src, dst, false),
        8 => transpose::<8>(src, dst, false),
        _ => dst.copy_from_slice(src),
    }
}

/// Elements handled per block: a block's lanes are written with whole-array copies.
const BLOCK: usize = 64;

/// `forward`: element-major `src` -> byte-lane-major `dst`; else the reverse. The tail that
/// does not fill an element is copied as is.
fn transpose<const W: usize>(src: &[u8], dst: &mut [u8], forward: bool) {
    let n = src.len() / W;
    let body = n * W;
    dst[body..].copy_from_slice(&src[body..]);
    let blocks = n / BLOCK;
    for b in 0..blocks {
        let mut lanes = [[0u8; BLOCK]; W];
        let e0 = b * BLOCK;
        if forward {
            let elems = &src[e0 * W..(e0 + BLOCK) * W];
            for (i, e) in elems.chunks_exact(W).enumerate() {
                for k in 0..W {
                    lanes[k][i] = e[k];
                }
            }
            for (k, lane) in lanes.iter().enumerate() {
                dst[k * n + e0..k * n + e0 + BLOCK].copy_from_slice(lane);
            }
        } else {
            for (k, lane) in lanes.iter_mut().enumerate() {
                lane.copy_from_slice(&src[k * n + e0..k * n + e0 + BLOCK]);
            }
            let elems = &mut dst[e0 * W..(e0 + BLOCK) * W];
            for (i, e) in elems.chunks_exact_mut(W).enumerate() {
                for k in 0..W {
                    e[k] = lanes[k][i];
                }
            }
        }
    }
    for i in blocks * BLOCK..n {
        for k in 0..W {
            if forward {
                dst[k * n + i] = src[i * W + k];
            } else {
                dst[i * W + k] = src[k * n + i];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_round_trips_with_tails() {
        for width in [2, 4, 8] {
            for len in [0, 1, 7, 64 * width, 64 * width + 3, 1000, 4096 + 5] {
                let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
                let mut shuffled = Vec::new();
                shuffle(&src, width, &mut shuffled);
                let n = len / width;
                for i in 0..n {
                    for k in 0..width {
                        assert_eq!(shuffled[k * n + i], src[i * width + k]);
                    }
                }
                assert_eq!(shuffled[n * width..], src[n * width..]);
                let mut back = vec![0u8; len];
                unshuffle(&shuffled, width, &mut back);
                assert_eq!(back, src, "width {width} len {len}");
            }
        }
    }

    #[test]
    fn names() {
        for w in [2, 4, 8] {
            assert_eq!(parse_filter(&filter_name(w)), Ok(w));
        }
        assert!(parse_filter("shuffle3").is_err());
        assert_eq!(shuffle_width("f32"), Some(4));
        assert_eq!(shuffle_width("u8"), None);
    }
}
