//! `KW_DEVICE` selects the default device (its own test binary: it sets the variable).

mod common;

use kernel_wisdom::{list_devices, open_default_device, Error};

#[test]
fn kw_device_selects_by_index_or_name() {
    let Some((index, dev)) = common::opencl_device() else {
        return;
    };
    let name = dev.info().name.clone();
    std::env::set_var("KW_DEVICE", index.to_string());
    assert_eq!(open_default_device().unwrap().info().name, name);
    let part: String = name.chars().skip(2).take(5).collect();
    std::env::set_var("KW_DEVICE", &part);
    assert_eq!(open_default_device().unwrap().info().name, name);
    std::env::set_var("KW_DEVICE", "no such device anywhere");
    let err = open_default_device().unwrap_err();
    assert!(matches!(err, Error::NoDevice { .. }), "{err}");
    assert!(err.to_string().contains("KW_DEVICE"), "{err}");
    std::env::set_var("KW_DEVICE", "17");
    assert!(open_default_device().is_err());
    std::env::remove_var("KW_DEVICE");
    let first = list_devices().unwrap()[0].info.name.clone();
    assert_eq!(open_default_device().unwrap().info().name, first);
}
