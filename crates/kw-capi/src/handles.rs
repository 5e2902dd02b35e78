//! Handles given to C: opaque numbers, never addresses. Each names an entry in a registry
//! of its kind; freeing removes the entry and numbers are never reused, so a freed (stale),
//! made-up or wrong-kind handle is found to be one and reported, never dereferenced.

use crate::status::{CError, Status};
use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

/// The kind of a handle, kept in its low bits so that a handle of one kind passed where
/// another is expected is named as such.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `kw_builder*`
    Builder = 1,
    /// `kw_device*`
    Device = 2,
    /// `kw_kernel*`
    Kernel = 3,
    /// `kw_library*`
    Library = 4,
}

const KIND_BITS: u32 = 3;
const KIND_MASK: usize = (1 << KIND_BITS) - 1;

impl Kind {
    /// The C type name.
    pub fn c_name(self) -> &'static str {
        match self {
            Kind::Builder => "kw_builder",
            Kind::Device => "kw_device",
            Kind::Kernel => "kw_kernel",
            Kind::Library => "kw_library",
        }
    }

    fn of(bits: usize) -> Option<Kind> {
        match bits & KIND_MASK {
            1 => Some(Kind::Builder),
            2 => Some(Kind::Device),
            3 => Some(Kind::Kernel),
            4 => Some(Kind::Library),
            _ => None,
        }
    }
}

/// Hashes a handle (a distinct number, never chosen by an adversary) with one multiply
/// instead of SipHash: the lookup is on every launch.
#[derive(Default)]
pub struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

type Map<T> = HashMap<usize, Arc<T>, BuildHasherDefault<HandleHasher>>;

/// Handle numbers, shared by every kind (so that no two live handles are equal).
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// The live objects of one kind.
pub struct Registry<T> {
    kind: Kind,
    map: OnceLock<RwLock<Map<T>>>,
}

impl<T> Registry<T> {
    /// An empty registry for handles of `kind`.
    pub const fn new(kind: Kind) -> Registry<T> {
        Registry {
            kind,
            map: OnceLock::new(),
        }
    }

    fn map(&self) -> &RwLock<Map<T>> {
        self.map.get_or_init(RwLock::default)
    }

    /// Registers `obj` and returns its new handle.
    pub fn insert(&self, obj: T) -> *mut c_void {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let handle = (id << KIND_BITS) | self.kind as usize;
        self.map()
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(handle, Arc::new(obj));
        handle as *mut c_void
    }

    fn check(&self, handle: *const c_void) -> Result<usize, CError> {
        let bits = handle as usize;
        let name = self.kind.c_name();
        if bits == 0 {
            return Err(CError::new(Status::Null, format!("a null {name} handle")));
        }
        // A number no handle ever had (`(kw_device*)1`) is said as such, whatever its kind bits.
        let id = bits >> KIND_BITS;
        let issued = id != 0 && id < NEXT.load(Ordering::Relaxed);
        match Kind::of(bits) {
            Some(k) if k == self.kind => Ok(bits),
            Some(other) if issued => Err(CError::new(
                Status::Handle,
                format!(
                    "a {} handle was given where a {name} is expected",
                    other.c_name()
                ),
            )),
            _ => Err(CError::new(
                Status::Handle,
                format!("{bits:#x} is not a {name} handle (not made by kernel-wisdom)"),
            )),
        }
    }

    fn stale(&self, bits: usize) -> CError {
        CError::new(
            Status::Handle,
            format!(
                "stale {} handle {bits:#x}: already freed, or never made by kernel-wisdom",
                self.kind.c_name()
            ),
        )
    }

    /// The object behind a handle.
    pub fn get(&self, handle: *const c_void) -> Result<Arc<T>, CError> {
        let bits = self.check(handle)?;
        self.map()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&bits)
            .cloned()
            .ok_or_else(|| self.stale(bits))
    }

    /// Removes a handle (its object is dropped when the last user lets go of it). A null
    /// handle is a no-op, as `free(NULL)` is.
    pub fn remove(&self, handle: *const c_void) -> Result<(), CError> {
        if handle.is_null() {
            return Ok(());
        }
        let bits = self.check(handle)?;
        let removed = self
            .map()
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&bits);
        match removed {
            Some(obj) => {
                drop(obj);
                Ok(())
            }
            None => Err(self.stale(bits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_foreign_and_wrong_kind_handles_are_errors() {
        static A: Registry<String> = Registry::new(Kind::Builder);
        static B: Registry<String> = Registry::new(Kind::Device);
        let h = A.insert("x".into());
        assert_eq!(*A.get(h).unwrap(), "x");
        let e = B.get(h).unwrap_err();
        assert_eq!(e.status, Status::Handle);
        assert!(e
            .message
            .contains("kw_builder handle was given where a kw_device"));
        A.remove(h).unwrap();
        let e = A.get(h).unwrap_err();
        assert!(
            e.message.contains("stale kw_builder handle"),
            "{}",
            e.message
        );
        assert_eq!(A.remove(h).unwrap_err().status, Status::Handle);
        assert_eq!(A.get(std::ptr::null()).unwrap_err().status, Status::Null);
        assert!(A.remove(std::ptr::null()).is_ok());
        let made_up = 0x1000 as *const c_void;
        assert_eq!(A.get(made_up).unwrap_err().status, Status::Handle);
        // A small number never issued, with another kind's bits, is not called that kind's.
        let one = B
            .get(std::ptr::without_provenance::<c_void>(1))
            .unwrap_err();
        assert!(
            one.message.contains("not made by kernel-wisdom"),
            "{}",
            one.message
        );
    }
}
