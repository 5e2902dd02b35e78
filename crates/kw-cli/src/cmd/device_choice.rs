//! The device a command works on (`kw tune`, `kw capture from-t1`): the one a selector or
//! `KW_DEVICE` names among the devices of a backend, else the first of that backend.

use anyhow::{Context, Result};
use kernel_wisdom::{open_listed, resolve, DeviceSelector};
use kw_core::{backend::Device, device::BackendKind};
use std::sync::Arc;

/// Opens the device to tune on: the one `selector` (or `KW_DEVICE`) names among the
/// devices of `backend` (an index as `kw devices` numbers them, or a name substring), else
/// the first of `backend`.
pub fn open_for(backend: BackendKind, selector: Option<&str>) -> Result<Arc<dyn Device>> {
    Ok(open_indexed(backend, selector)?.0)
}

/// [`open_for`], also returning the device's stable identity
/// ([`kernel_wisdom::ListedDevice::identity`]): what evaluation workers are given, so that
/// they open exactly this device whatever their own numbering.
pub fn open_indexed(
    backend: BackendKind,
    selector: Option<&str>,
) -> Result<(Arc<dyn Device>, String)> {
    let selector = match selector {
        Some(s) => Some(DeviceSelector::parse(s)),
        None => std::env::var(kernel_wisdom::DEVICE_ENV)
            .ok()
            .map(|s| DeviceSelector::parse(&s)),
    };
    let listed = match selector {
        Some(s) => resolve(&s, Some(backend))?,
        None => kernel_wisdom::first_device_of(backend)
            .with_context(|| format!("no {backend} device to replay on"))?,
    };
    Ok((open_listed(&listed)?, listed.identity()))
}
