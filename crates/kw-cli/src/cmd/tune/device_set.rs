//! `kw tune --devices all|I,J,...` (and `KW_DEVICES`): the devices a run uses, and their
//! models. A model is what a wisdom record names as its device: the exact name, the backend
//! and the architecture. Devices of one model may share a search; devices of different
//! models tune separately.

use anyhow::{bail, Context, Result};
use kernel_wisdom::{list_devices, ListedDevice};
use kw_core::device::BackendKind;

/// The environment variable that gives `--devices` when neither it nor `--device` is given.
pub(super) const DEVICES_ENV: &str = "KW_DEVICES";

/// The devices asked for, and where they were asked for (`--devices` or `KW_DEVICES`: the
/// errors name it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DeviceSet {
    /// Which devices.
    pub(super) which: Which,
    /// `--devices` or [`DEVICES_ENV`].
    from: &'static str,
}

/// Which devices a [`DeviceSet`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Which {
    /// Every device of the capture's backend.
    All,
    /// These indices, as `kw devices` numbers them.
    Indices(Vec<usize>),
}

impl DeviceSet {
    /// Parses `all` or `0,2,...` (`what` names the source in errors).
    pub(super) fn parse(text: &str, what: &'static str) -> Result<DeviceSet> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(DeviceSet {
                which: Which::All,
                from: what,
            });
        }
        let mut indices = Vec::new();
        for item in t.split(',').map(str::trim) {
            let i: usize = item.parse().with_context(|| {
                format!(
                    "{what} `{text}`: `{item}` is not a device index (give `all` or indices as \
                     `kw devices` numbers them, e.g. `0,2`)"
                )
            })?;
            if !indices.contains(&i) {
                indices.push(i);
            }
        }
        Ok(DeviceSet {
            which: Which::Indices(indices),
            from: what,
        })
    }

    /// The set from `--devices`, else from `KW_DEVICES` unless `--device` names one device
    /// (a command-line option overrides the environment); `None`: one device, as before.
    pub(super) fn from_args(devices: Option<&str>, device: Option<&str>) -> Result<Option<Self>> {
        if let Some(d) = devices {
            return DeviceSet::parse(d, "--devices").map(Some);
        }
        if device.is_some() {
            return Ok(None);
        }
        match std::env::var(DEVICES_ENV) {
            Ok(v) if !v.trim().is_empty() => DeviceSet::parse(&v, DEVICES_ENV).map(Some),
            _ => Ok(None),
        }
    }

    /// The listed devices of `backend` this set names, in index order. An index that names
    /// no device is an error; so is a set with no device of `backend`.
    pub(super) fn resolve(&self, backend: BackendKind) -> Result<Vec<ListedDevice>> {
        let listed = list_devices().context("listing the devices")?;
        let from = self.from;
        if let Which::Indices(indices) = &self.which {
            if let Some(i) = indices
                .iter()
                .find(|i| !listed.iter().any(|d| d.index == **i))
            {
                bail!(
                    "{from}: there is no device {i} (`kw devices` lists {} device(s))",
                    listed.len()
                );
            }
        }
        let chosen: Vec<ListedDevice> = listed
            .into_iter()
            .filter(|d| d.info.backend == backend)
            .filter(|d| match &self.which {
                Which::All => true,
                Which::Indices(i) => i.contains(&d.index),
            })
            .collect();
        if chosen.is_empty() {
            bail!(
                "{from}: none of the devices asked for is of the capture's backend \
                 ({backend}); `kw devices` lists them"
            );
        }
        Ok(chosen)
    }
}

/// A device's model: exact name, backend and architecture (a wisdom record's device).
pub(super) fn model_of(d: &ListedDevice) -> (String, BackendKind, String) {
    (
        d.info.name.clone(),
        d.info.backend,
        d.info.architecture.clone(),
    )
}

/// The devices grouped by model, in the order of each model's first device.
pub(super) fn by_model(devices: Vec<ListedDevice>) -> Vec<Vec<ListedDevice>> {
    let mut groups: Vec<Vec<ListedDevice>> = Vec::new();
    for d in devices {
        match groups.iter_mut().find(|g| model_of(&g[0]) == model_of(&d)) {
            Some(g) => g.push(d),
            None => groups.push(vec![d]),
        }
    }
    groups
}

/// How a device is named in progress lines, logs and summaries: its index as `kw devices`
/// numbers it.
pub(super) fn label(d: &ListedDevice) -> String {
    format!("device {}", d.index)
}

/// ` on device 1`, ` on devices 0, 1`, or nothing for no device (`--device`'s path).
pub(super) fn on_devices(devices: &[ListedDevice]) -> String {
    match devices {
        [] => String::new(),
        [one] => format!(" on {}", label(one)),
        many => format!(
            " on devices {}",
            many.iter()
                .map(|d| d.index.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_and_bad_ones_say_why() {
        assert_eq!(
            DeviceSet::parse("all", "--devices").unwrap().which,
            Which::All
        );
        assert_eq!(
            DeviceSet::parse(" 0, 2,2 ", "--devices").unwrap().which,
            Which::Indices(vec![0, 2])
        );
        let e = DeviceSet::parse("0,gpu", "KW_DEVICES").unwrap_err();
        assert!(format!("{e:#}").contains("KW_DEVICES `0,gpu`: `gpu` is not a device index"));
        // --device overrides KW_DEVICES; --devices is read first.
        assert_eq!(DeviceSet::from_args(None, Some("1")).unwrap(), None);
        assert_eq!(
            DeviceSet::from_args(Some("1"), None).unwrap(),
            Some(DeviceSet {
                which: Which::Indices(vec![1]),
                from: "--devices"
            })
        );
    }

    #[test]
    fn an_index_with_no_device_names_where_it_was_asked_for() {
        // No machine numbers a device 9999; the error names the source it came from.
        for from in ["--devices", DEVICES_ENV] {
            let set = DeviceSet::parse("9999", from).unwrap();
            let e = set.resolve(BackendKind::Opencl).unwrap_err();
            let text = format!("{e:#}");
            assert!(
                text.starts_with(&format!("{from}: there is no device 9999"))
                    || text.starts_with("listing the devices"),
                "{text}"
            );
        }
    }
}
