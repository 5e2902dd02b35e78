//! Choosing a device: by index, by name substring, or by the `KW_DEVICE` environment
//! variable. Devices are numbered over all backends: CUDA first (where a driver is present),
//! then OpenCL.

use crate::error::Error;
use kw_core::backend::{Backend, BackendError};
use kw_core::{Device, DeviceInfo};
use kw_cuda::CudaBackend;
use kw_opencl::OpenClBackend;
use std::sync::Arc;

/// The environment variable that selects the default device: an index or a name substring.
pub const DEVICE_ENV: &str = "KW_DEVICE";

/// How to pick a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelector {
    /// The device with this index in [`list_devices`].
    Index(usize),
    /// The first device whose name contains this text (case-insensitive).
    Name(String),
}

impl DeviceSelector {
    /// Parses `KW_DEVICE`-style text: a number is an index, anything else a name substring;
    /// empty text is index 0.
    pub fn parse(text: &str) -> DeviceSelector {
        let t = text.trim();
        if t.is_empty() {
            DeviceSelector::Index(0)
        } else if let Ok(i) = t.parse::<usize>() {
            DeviceSelector::Index(i)
        } else {
            DeviceSelector::Name(t.to_string())
        }
    }

    /// The selector from `KW_DEVICE` (index 0 when unset).
    pub fn from_env() -> DeviceSelector {
        DeviceSelector::parse(&std::env::var(DEVICE_ENV).unwrap_or_default())
    }
}

/// The backends compiled in, in numbering order: CUDA first, so that device 0 is a CUDA
/// device wherever a CUDA driver is present.
pub fn backends() -> Vec<Box<dyn Backend>> {
    vec![Box::new(CudaBackend), Box::new(OpenClBackend)]
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

/// Every device of every available backend. Backends that are not available are skipped;
/// if none is, the last backend's "unavailable" error is returned.
pub fn list_devices() -> Result<Vec<ListedDevice>, Error> {
    let mut out = Vec::new();
    let mut last_err: Option<BackendError> = None;
    for (b, backend) in backends().iter().enumerate() {
        match backend.devices() {
            Ok(infos) => {
                for (i, info) in infos.into_iter().enumerate() {
                    out.push(ListedDevice {
                        index: out.len(),
                        backend: b,
                        backend_index: i,
                        info,
                    });
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    match (out.is_empty(), last_err) {
        (true, Some(e)) => Err(e.into()),
        _ => Ok(out),
    }
}

/// Opens the device a selector picks.
pub fn open_device(selector: &DeviceSelector) -> Result<Arc<dyn Device>, Error> {
    let devices = list_devices()?;
    let found = match selector {
        DeviceSelector::Index(i) => devices.get(*i),
        DeviceSelector::Name(n) => {
            let n = n.to_lowercase();
            devices
                .iter()
                .find(|d| d.info.name.to_lowercase().contains(&n))
        }
    };
    let Some(d) = found else {
        let available: Vec<String> = devices
            .iter()
            .map(|d| format!("{}: {} ({})", d.index, d.info.name, d.info.backend))
            .collect();
        return Err(Error::NoDevice {
            selector: match selector {
                DeviceSelector::Index(i) => format!("index {i}"),
                DeviceSelector::Name(n) => format!("a name containing {n:?}"),
            },
            available: available.join(", "),
        });
    };
    report_cache_settings();
    Ok(backends()[d.backend].open(d.backend_index)?)
}

/// Says once which compile cache the process uses (debug) and what is wrong with its
/// settings (warnings), and routes the cache's word about replaced entries to the
/// diagnostics (a warning per entry).
fn report_cache_settings() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        kw_core::compile_cache::set_warning_hook(|m| crate::diag::warn_once(m.to_string()));
        let s = kw_core::compile_cache::CacheSettings::from_env();
        for p in &s.problems {
            crate::diag::warn(p);
        }
        match (&s.dir, &s.off_reason) {
            (Some(dir), _) => crate::diag::debug(&format!(
                "compile cache: {} (limit {})",
                dir.display(),
                crate::diag::bytes(s.max_bytes)
            )),
            (None, reason) => crate::diag::debug(&format!(
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

    #[test]
    fn selectors_parse_like_kw_device() {
        assert_eq!(DeviceSelector::parse(""), DeviceSelector::Index(0));
        assert_eq!(DeviceSelector::parse(" 2 "), DeviceSelector::Index(2));
        assert_eq!(
            DeviceSelector::parse("A100"),
            DeviceSelector::Name("A100".into())
        );
    }
}
