//! What a launch looks up, fast: the problem size -> selection map and the memo of argument
//! shapes already checked.
//!
//! Every launch needs its problem size (expressions over the arguments), the check of every
//! buffer's length, and the configuration selected for that size. All of these depend on
//! the arguments only through their [`ArgShape`] (kinds, types, buffer element counts,
//! scalar values; never the buffers' addresses), so a launch whose shape was launched
//! before takes the earlier launch's results from the [`ShapeMemo`] and evaluates nothing.

use kw_core::backend::KernelArg;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

/// A map looked up on every launch, hashed with a few multiplies instead of SipHash (the
/// keys are the application's sizes and arguments, not an adversary's).
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The hasher of [`FastMap`]: multiply-rotate over 64-bit words.
#[derive(Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.write_u64(u64::from_ne_bytes(word));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// Launches with more arguments than this are not memoised (they take the full path).
const SHAPE_ARGS: usize = 16;

/// Shapes remembered per kernel; once full, new shapes are not remembered (an application
/// whose scalars change on every launch takes the full path, without growing the memo).
const SHAPE_LIMIT: usize = 64;

/// Everything launch-time expressions can see of a launch's arguments: per argument its
/// kind and type, and a buffer's element count or a scalar's bits. Only the first `2 * n`
/// words are written (a launch touches no more of its stack than it needs).
#[derive(Clone, Copy)]
pub(crate) struct ArgShape {
    n: usize,
    words: [MaybeUninit<u64>; 2 * SHAPE_ARGS],
}

impl ArgShape {
    /// No arguments yet (fill it with [`ArgShape::set`]).
    pub(crate) const EMPTY: ArgShape = ArgShape {
        n: 0,
        words: [MaybeUninit::uninit(); 2 * SHAPE_ARGS],
    };

    /// Makes this the shape of `args`, in place (the shape is large: no copies on the
    /// launch path); `false` beyond [`SHAPE_ARGS`] arguments (not memoised).
    #[inline]
    pub(crate) fn set(&mut self, args: &[KernelArg<'_>]) -> bool {
        if args.len() > SHAPE_ARGS {
            return false;
        }
        for (w, a) in self.words.chunks_exact_mut(2).zip(args) {
            let (tag, value) = match a {
                KernelArg::Buffer { elem, len, .. } => (*elem as u64, *len as u64),
                KernelArg::Scalar(s) => {
                    let mut bits = [0u8; 8];
                    bits[..s.bytes().len()].copy_from_slice(s.bytes());
                    (0x100 | s.ty() as u64, u64::from_ne_bytes(bits))
                }
            };
            w[0].write(tag);
            w[1].write(value);
        }
        self.n = args.len();
        true
    }

    fn used(&self) -> &[u64] {
        let used = &self.words[..2 * self.n];
        // SAFETY: `set` wrote the first `2 * n` words; `MaybeUninit<u64>` has `u64`'s layout.
        unsafe { std::slice::from_raw_parts(used.as_ptr().cast(), used.len()) }
    }
}

impl PartialEq for ArgShape {
    fn eq(&self, other: &ArgShape) -> bool {
        self.used() == other.used()
    }
}

impl Eq for ArgShape {}

impl Hash for ArgShape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for &w in self.used() {
            state.write_u64(w);
        }
    }
}

/// Argument shapes already launched, with what their launches computed (`T`: the problem
/// size and the selection).
pub(crate) struct ShapeMemo<T> {
    map: RwLock<FastMap<ArgShape, T>>,
    len: AtomicUsize,
}

impl<T> ShapeMemo<T> {
    pub(crate) fn new() -> ShapeMemo<T> {
        ShapeMemo {
            map: RwLock::new(FastMap::default()),
            len: AtomicUsize::new(0),
        }
    }

    /// Calls `f` with what an earlier launch of this shape computed, under the memo's read
    /// lock (`f` must not write to the memo); `None` for a shape not seen.
    #[inline]
    pub(crate) fn with<R>(&self, shape: &ArgShape, f: impl FnOnce(&T) -> R) -> Option<R> {
        if self.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.get(shape).map(f)
    }

    /// Remembers a launch's results, unless the memo is full.
    pub(crate) fn remember(&self, shape: &ArgShape, value: T) {
        if self.len.load(Ordering::Relaxed) >= SHAPE_LIMIT {
            return;
        }
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if map.len() < SHAPE_LIMIT {
            map.insert(*shape, value);
            self.len.store(map.len(), Ordering::Relaxed);
        }
    }

    /// Forgets every shape (a selection was replaced).
    pub(crate) fn clear(&self) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        map.clear();
        self.len.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_core::backend::RawMem;
    use kw_core::scalar::ScalarType;

    fn buf(ptr: u64, len: usize) -> KernelArg<'static> {
        // SAFETY: never dereferenced: only shapes are taken.
        unsafe { KernelArg::raw_buffer(RawMem::cuda(ptr, len * 4), ScalarType::F32) }
    }

    #[test]
    fn shapes_ignore_addresses_and_see_lengths_types_and_values() {
        let a = [buf(0x1000, 64), 7i32.into()];
        let same_elsewhere = [buf(0x9000, 64), 7i32.into()];
        let longer = [buf(0x1000, 65), 7i32.into()];
        let other_value = [buf(0x1000, 64), 8i32.into()];
        let other_type = [buf(0x1000, 64), 7u32.into()];
        let shape = |args: &[KernelArg<'_>]| {
            let mut s = ArgShape::EMPTY;
            assert!(s.set(args));
            s
        };
        assert!(shape(&a) == shape(&same_elsewhere));
        assert!(shape(&a) != shape(&longer));
        assert!(shape(&a) != shape(&other_value));
        assert!(shape(&a) != shape(&other_type));
        assert!(shape(&a) != shape(&a[..1]));
        let many = vec![KernelArg::from(1i32); SHAPE_ARGS + 1];
        let mut too_many = ArgShape::EMPTY;
        assert!(!too_many.set(&many));
    }

    #[test]
    fn the_memo_is_bounded_and_can_be_cleared() {
        let shape = |v: i32| {
            let mut s = ArgShape::EMPTY;
            s.set(&[v.into()]);
            s
        };
        let memo = ShapeMemo::new();
        for v in 0..(SHAPE_LIMIT as i32 + 10) {
            memo.remember(&shape(v), v);
        }
        assert_eq!(memo.with(&shape(3), |v| *v), Some(3));
        assert_eq!(
            memo.with(&shape(SHAPE_LIMIT as i32 + 5), |v| *v),
            None,
            "shapes beyond the limit are not remembered"
        );
        memo.clear();
        assert_eq!(memo.with(&shape(3), |v| *v), None);
    }
}
