//! Gives the C library the SONAME it is installed under (`tools/install-capi.sh` installs
//! Cargo's `libkernel_wisdom_c.so` as `libkernel_wisdom.so.0`, linked from
//! `libkernel_wisdom.so`), so that programs linked against it record that name.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkernel_wisdom.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
