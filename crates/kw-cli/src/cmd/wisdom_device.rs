//! The device `kw wisdom explain --device` explains a selection for: what `--device` takes
//! elsewhere (an index or a name substring of a device here, as `kw devices` lists them),
//! or a device the wisdom's records name (exactly, or by a substring of one name).

use anyhow::{bail, Result};
use kernel_wisdom::DeviceSelector;
use kw_core::wisdom::WisdomRecord;

/// A device to select for: name, architecture and backend (empty: not known).
#[derive(Debug, PartialEq)]
pub struct Target {
    /// The device name.
    pub name: String,
    /// Its architecture.
    pub architecture: String,
    /// Its backend (`cuda`, `opencl`).
    pub backend: String,
}

/// Resolves `text` against the devices here and the records' devices.
pub fn resolve(text: &str, records: &[WisdomRecord]) -> Result<Target> {
    let here = kernel_wisdom::list_devices().unwrap_or_default();
    let local = |d: &kernel_wisdom::ListedDevice| Target {
        name: d.info.name.clone(),
        architecture: d.info.architecture.clone(),
        backend: d.info.backend.as_str().to_string(),
    };
    let of_record = |r: &WisdomRecord| Target {
        name: r.device.name.clone(),
        architecture: r.device.architecture.clone(),
        backend: r.device.backend.clone(),
    };
    let listed_here = || {
        if here.is_empty() {
            "none".to_string()
        } else {
            here.iter()
                .map(|d| format!("{}: {}", d.index, d.info.name))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut names: Vec<&str> = records.iter().map(|r| r.device.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    match DeviceSelector::parse(text) {
        DeviceSelector::Index(i) => match here.iter().find(|d| d.index == i) {
            Some(d) => Ok(local(d)),
            None => bail!(
                "--device {i}: no device has index {i} here (devices: {})",
                listed_here()
            ),
        },
        DeviceSelector::Id(id) => bail!("--device {id}: give an index or a name, not an identity"),
        DeviceSelector::Name(n) => {
            if let Some(r) = records.iter().find(|r| r.device.name == n) {
                return Ok(of_record(r));
            }
            let lower = n.to_lowercase();
            if let Some(d) = here
                .iter()
                .find(|d| d.info.name.to_lowercase().contains(&lower))
            {
                return Ok(local(d));
            }
            let matching: Vec<&str> = names
                .iter()
                .copied()
                .filter(|name| name.to_lowercase().contains(&lower))
                .collect();
            match matching.as_slice() {
                [one] => Ok(of_record(
                    records
                        .iter()
                        .find(|r| r.device.name == *one)
                        .expect("a record's name"),
                )),
                [] if names.is_empty() => bail!(
                    "--device {n:?} matches no device here (devices: {}), and the wisdom holds \
                     no usable record to take a device name from (records skipped as unusable \
                     are said above)",
                    listed_here()
                ),
                [] => bail!(
                    "--device {n:?} matches no device here (devices: {}) and no device of the \
                     records ({})",
                    listed_here(),
                    names.join(", ")
                ),
                many => bail!(
                    "--device {n:?} matches several devices of the records ({}): give more of \
                     the name",
                    many.join(", ")
                ),
            }
        }
    }
}
