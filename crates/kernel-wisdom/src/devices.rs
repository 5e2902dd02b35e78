//! Choosing a device: by index, by name substring, or by the `KW_DEVICE` environment
//! variable. Devices are numbered over all backends: CUDA first (where a driver is present),
//! then OpenCL (its GPUs and accelerators before its CPUs). A backend left out of the build
//! (cargo features `cuda`, `opencl`) keeps its name and answers [`BackendError::NotBuilt`].

use crate::error::Error;
use kw_core::backend::{Backend, BackendError};
use kw_core::{backend::Device, device::BackendKind, device::DeviceInfo};
use std::sync::Arc;

#[cfg(any(not(feature = "cuda"), not(feature = "opencl")))]
mod not_built;
#[cfg(feature = "cuda")]
pub use kw_cuda::CudaBackend;
#[cfg(feature = "opencl")]
pub use kw_opencl::OpenClBackend;
#[cfg(not(feature = "cuda"))]
pub use not_built::CudaBackend;
#[cfg(not(feature = "opencl"))]
pub use not_built::OpenClBackend;

/// The environment variable that selects the default device: an index or a name substring.
pub const DEVICE_ENV: &str = "KW_DEVICE";

/// How a device identity ([`ListedDevice::identity`]) starts.
const ID_PREFIX: &str = "id:";

/// How to pick a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelector {
    /// The device with this index in [`list_devices`].
    Index(usize),
    /// The first device whose name contains this text (case-insensitive).
    Name(String),
    /// The device [`ListedDevice::identity`] describes (`id:...`): what a process hands to
    /// another so that both open the same device however each numbers them.
    Id(String),
}

impl DeviceSelector {
    /// Parses `KW_DEVICE`-style text: a number is an index, anything else a name substring;
    /// empty text is index 0.
    pub fn parse(text: &str) -> DeviceSelector {
        let t = text.trim();
        if t.starts_with(ID_PREFIX) {
            DeviceSelector::Id(t.to_string())
        } else if t.is_empty() {
            DeviceSelector::Index(0)
        } else if let Ok(i) = t.parse::<usize>() {
            DeviceSelector::Index(i)
        } else {
            DeviceSelector::Name(t.to_string())
        }
    }

    /// The selector from `KW_DEVICE` (index 0 when unset).
    pub fn from_env() -> DeviceSelector {
        DeviceSelector::parse(&kw_core::diag::env_var(DEVICE_ENV).unwrap_or_default())
    }
}

/// The backends, in numbering order: CUDA first, so that device 0 is a CUDA device wherever
/// a CUDA driver is present. A backend left out of the build is listed too; it has no
/// devices.
pub fn backends() -> Vec<Box<dyn Backend>> {
    vec![Box::new(CudaBackend), Box::new(OpenClBackend)]
}

/// The first device of `kind`: [`BackendError::NotBuilt`] when this build has no such
/// backend, [`Error::NoDevice`] when it has no device.
pub fn first_device_of(kind: BackendKind) -> Result<ListedDevice, Error> {
    let devices = match list_devices() {
        Ok(d) => d,
        Err(_) if !backend_built(kind) => Vec::new(),
        Err(e) => return Err(e),
    };
    if let Some(d) = devices.into_iter().find(|d| d.info.backend == kind) {
        return Ok(d);
    }
    let backend = backends().into_iter().find(|b| b.kind() == kind);
    match backend.map(|b| b.devices()) {
        Some(Err(e)) => Err(e.into()),
        _ => Err(Error::NoDevice {
            selector: format!("the first {kind} device"),
            available: "none".into(),
        }),
    }
}

/// Whether this build includes the backend `kind` (cargo features `cuda`, `opencl`).
pub fn backend_built(kind: BackendKind) -> bool {
    match kind {
        BackendKind::Cuda => cfg!(feature = "cuda"),
        BackendKind::Opencl => cfg!(feature = "opencl"),
    }
}

/// A device of some backend: its global index, its backend's index of it, its description.
#[derive(Clone, Debug)]
pub struct ListedDevice {
    /// Index over all backends (what [`DeviceSelector::Index`] takes).
    pub index: usize,
    /// Which backend (position in [`backends`]).
    pub backend: usize,
    /// The index within that backend.
    pub backend_index: usize,
    /// The description.
    pub info: DeviceInfo,
}

impl ListedDevice {
    /// A stable identity: `id:BACKEND:INDEX-IN-BACKEND:UUID:NAME` (`-` for no UUID). Another
    /// process opens the same device from it ([`DeviceSelector::Id`]) whatever devices
    /// other backends list there: by UUID where the driver gives one that no other device
    /// shares, else by the backend's own index, checked against the name.
    pub fn identity(&self) -> String {
        format!(
            "{ID_PREFIX}{}:{}:{}:{}",
            self.info.backend.as_str(),
            self.backend_index,
            self.info.uuid.as_deref().unwrap_or("-"),
            self.info.name
        )
    }
}

/// The device of `devices` that `id` ([`ListedDevice::identity`]) describes.
fn find_identity<'a>(devices: &'a [ListedDevice], id: &str) -> Option<&'a ListedDevice> {
    let mut parts = id.strip_prefix(ID_PREFIX)?.splitn(4, ':');
    let (backend, index, uuid, name) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let index: usize = index.parse().ok()?;
    let of_backend: Vec<&ListedDevice> = devices
        .iter()
        .filter(|d| d.info.backend.as_str() == backend)
        .collect();
    if uuid != "-" {
        let same: Vec<&&ListedDevice> = of_backend
            .iter()
            .filter(|d| d.info.uuid.as_deref() == Some(uuid))
            .collect();
        if let [one] = same.as_slice() {
            return (one.info.name == name).then_some(**one);
        }
    }
    of_backend
        .into_iter()
        .find(|d| d.backend_index == index && d.info.name == name)
}

/// The device `selector` picks among `devices`, restricted to `backend` when given (an
/// index naming a device of another backend matches nothing).
pub fn resolve(
    selector: &DeviceSelector,
    backend: Option<BackendKind>,
) -> Result<ListedDevice, Error> {
    let devices = list_devices()?;
    let in_backend = |d: &&ListedDevice| backend.is_none_or(|b| d.info.backend == b);
    let found = match selector {
        DeviceSelector::Index(i) => devices.get(*i).filter(in_backend),
        DeviceSelector::Name(n) => {
            let n = n.to_lowercase();
            devices
                .iter()
                .filter(in_backend)
                .find(|d| d.info.name.to_lowercase().contains(&n))
        }
        DeviceSelector::Id(id) => find_identity(&devices, id).filter(in_backend),
    };
    if let Some(d) = found {
        return Ok(d.clone());
    }
    let available: Vec<String> = devices
        .iter()
        .map(|d| format!("{}: {} ({})", d.index, d.info.name, d.info.backend))
        .collect();
    let within = backend.map_or(String::new(), |b| format!(" among the {b} devices"));
    Err(Error::NoDevice {
        selector: match selector {
            DeviceSelector::Index(i) => format!("index {i}{within}"),
            DeviceSelector::Name(n) => format!("a name containing {n:?}{within}"),
            DeviceSelector::Id(id) => format!("the identity {id:?}{within}"),
        },
        available: available.join(", "),
    })
}

/// Opens a device [`resolve`] found.
pub fn open_listed(d: &ListedDevice) -> Result<Arc<dyn Device>, Error> {
    report_cache_settings();
    Ok(backends()[d.backend].open(d.backend_index)?)
}

/// Every device of every available backend. Backends that are not available are skipped;
/// if none is, the last backend's "unavailable" error is returned.
pub fn list_devices() -> Result<Vec<ListedDevice>, Error> {
    let mut out = Vec::new();
    let mut last_err: Option<BackendError> = None;
    let mut not_built: Option<BackendError> = None;
    let mut answered = false;
    for (b, backend) in backends().iter().enumerate() {
        match backend.devices() {
            Ok(infos) => {
                answered = true;
                for (i, info) in infos.into_iter().enumerate() {
                    out.push(ListedDevice {
                        index: out.len(),
                        backend: b,
                        backend_index: i,
                        info,
                    });
                }
            }
            // A backend left out of the build explains an empty list only when no backend
            // of the build answered.
            Err(e @ BackendError::NotBuilt { .. }) => {
                not_built.get_or_insert(e);
            }
            Err(e) => last_err = Some(e),
        }
    }
    if !out.is_empty() {
        return Ok(out);
    }
    match (last_err, not_built) {
        (Some(e), _) => Err(e.into()),
        (None, Some(e)) if !answered => Err(e.into()),
        _ => Ok(out),
    }
}

/// Opens the device a selector picks.
pub fn open_device(selector: &DeviceSelector) -> Result<Arc<dyn Device>, Error> {
    open_listed(&resolve(selector, None)?)
}

/// Says once which compile cache the process uses (debug) and what is wrong with its
/// settings (warnings).
fn report_cache_settings() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let s = kw_core::compile_cache::CacheSettings::from_env();
        for p in &s.problems {
            kw_core::diag::warn_once(p);
        }
        match (&s.dir, &s.off_reason) {
            (Some(dir), _) => kw_core::diag::debug(&format!(
                "compile cache: {} (limit {})",
                dir.display(),
                kw_core::diag::bytes(s.max_bytes)
            )),
            (None, reason) => kw_core::diag::debug(&format!(
                "compile cache: off ({})",
                reason.as_deref().unwrap_or("")
            )),
        }
    });
}

/// Opens the device `KW_DEVICE` selects (an index or a name substring; device 0 if unset).
pub fn open_default_device() -> Result<Arc<dyn Device>, Error> {
    open_device(&DeviceSelector::from_env()).map_err(|e| match e {
        Error::NoDevice {
            selector,
            available,
        } if std::env::var_os(DEVICE_ENV).is_some() => Error::NoDevice {
            selector: format!("{DEVICE_ENV} ({selector})"),
            available,
        },
        e => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each backend left out of the build answers a typed "built without" error, through
    /// the same functions a full build offers (`cargo test -p kernel-wisdom --lib
    /// --no-default-features --features opencl` runs the CUDA half).
    #[test]
    fn a_backend_left_out_says_so() {
        for kind in [BackendKind::Cuda, BackendKind::Opencl] {
            if backend_built(kind) {
                continue;
            }
            let b = backends().into_iter().find(|b| b.kind() == kind).unwrap();
            let Err(e) = b.open(0) else {
                panic!("a device of a backend left out of the build");
            };
            assert!(
                matches!(e, BackendError::NotBuilt { backend, .. } if backend == kind),
                "{e}"
            );
            let text = first_device_of(kind).unwrap_err().to_string();
            assert!(
                text.contains(&format!("built without {kind} support")),
                "{text}"
            );
            assert!(!list_devices()
                .unwrap_or_default()
                .iter()
                .any(|d| d.info.backend == kind));
        }
        assert_eq!(backend_built(BackendKind::Cuda), cfg!(feature = "cuda"));
        assert_eq!(backend_built(BackendKind::Opencl), cfg!(feature = "opencl"));
    }

    #[test]
    fn selectors_parse_like_kw_device() {
        assert_eq!(DeviceSelector::parse(""), DeviceSelector::Index(0));
        assert_eq!(DeviceSelector::parse(" 2 "), DeviceSelector::Index(2));
        assert_eq!(
            DeviceSelector::parse("A100"),
            DeviceSelector::Name("A100".into())
        );
        assert_eq!(
            DeviceSelector::parse("id:opencl:1:-:a:b"),
            DeviceSelector::Id("id:opencl:1:-:a:b".into())
        );
    }

    fn listed(index: usize, backend_index: usize, uuid: Option<&str>, name: &str) -> ListedDevice {
        use kw_core::backend::Device as _;
        let mut info = kw_core::null_device::NullDevice::new(BackendKind::Opencl)
            .info()
            .clone();
        info.uuid = uuid.map(str::to_string);
        info.name = name.into();
        ListedDevice {
            index,
            backend: 1,
            backend_index,
            info,
        }
    }

    #[test]
    fn identities_find_the_same_device_in_another_numbering() {
        let here = [listed(0, 0, None, "cpu: a"), listed(1, 1, None, "cpu: a")];
        let id = here[1].identity();
        assert_eq!(id, "id:opencl:1:-:cpu: a");
        // Elsewhere a CUDA device comes first: the global index moves, the identity holds.
        let there = [listed(1, 0, None, "cpu: a"), listed(2, 1, None, "cpu: a")];
        assert_eq!(find_identity(&there, &id).map(|d| d.index), Some(2));
        // A different device at that position is not taken for it.
        let other = [listed(0, 0, None, "cpu: a"), listed(1, 1, None, "gpu")];
        assert!(find_identity(&other, &id).is_none());
        // A unique UUID wins over the position.
        let u = [listed(0, 0, Some("u0"), "g"), listed(1, 1, Some("u1"), "g")];
        let moved = [listed(0, 0, Some("u1"), "g"), listed(1, 1, Some("u0"), "g")];
        assert_eq!(
            find_identity(&moved, &u[1].identity()).map(|d| d.index),
            Some(0)
        );
    }
}
