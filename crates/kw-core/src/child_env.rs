//! The environment a child process must get back from this one.
//!
//! An OpenCL ICD loader (the one CUDA 13 ships in `/usr/local/cuda/lib64`) splits
//! `OCL_ICD_FILENAMES` in place (`strtok`) when it first loads: from then on this process's
//! own environment holds only the first file of the list (`libpocl.so.2:libnvidia-opencl.so.1`
//! reads `libpocl.so.2`), and a child spawned afterwards (`kw tune`'s evaluation worker, the
//! T1 reference child, an online job's `kw tune`) loads only that platform. Measured on the
//! H100 machine: `kw tune` opened NVIDIA's OpenCL device and its worker could not find it.
//! [`restore_icd_env`] gives a child the values this process started with, rebuilt from
//! `/proc/self/environ`, where the split left the list's other words as entries of their own.

use std::ffi::OsString;
use std::process::Command;
use std::sync::OnceLock;

/// The ICD loader's variable whose value, a list, is split in place.
pub const ICD_LIST_VARIABLES: [&str; 1] = ["OCL_ICD_FILENAMES"];

/// Sets on `cmd` the ICD loader's list as this process started with it, where the present
/// value is that list or its first words (see the module's documentation). Set even when
/// the value is whole now: another thread may load OpenCL before `cmd` is spawned.
pub fn restore_icd_env(cmd: &mut Command) {
    for (name, value) in restorable(originals(), |name| std::env::var_os(name)) {
        cmd.env(name, value);
    }
}

/// `Command::new(program)` with [`restore_icd_env`] applied: for a child that may use
/// OpenCL (tests spawning `kw` or themselves with a device index of this process's numbering).
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    restore_icd_env(&mut cmd);
    cmd
}

/// The values the process started with, [`rejoined`] from `/proc/self/environ` (read once:
/// the loader's split leaves that image readable either way).
fn originals() -> &'static [(&'static str, OsString)] {
    static ORIGINALS: OnceLock<Vec<(&'static str, OsString)>> = OnceLock::new();
    ORIGINALS.get_or_init(|| match std::fs::read("/proc/self/environ") {
        Ok(environ) => started_with(&environ),
        Err(_) => Vec::new(),
    })
}

/// [`ICD_LIST_VARIABLES`] as `environ` (a `/proc/PID/environ` image) holds them, [`rejoined`].
pub fn started_with(environ: &[u8]) -> Vec<(&'static str, OsString)> {
    ICD_LIST_VARIABLES
        .into_iter()
        .filter_map(|name| Some((name, rejoined(environ, name)?)))
        .collect()
}

/// The `originals` to give a child: those whose present value (`current`) is the original
/// or its first words (a `:`-prefix); a value the program changed or removed is its own.
pub fn restorable(
    originals: &[(&'static str, OsString)],
    current: impl Fn(&str) -> Option<OsString>,
) -> Vec<(&'static str, OsString)> {
    originals
        .iter()
        .filter(|(name, original)| {
            let Some(now) = current(name) else {
                return false;
            };
            let (o, n) = (original.as_encoded_bytes(), now.as_encoded_bytes());
            o == n || (o.len() > n.len() && o.starts_with(n) && o[n.len()] == b':')
        })
        .cloned()
        .collect()
}

/// The value of `name` in `environ` (NUL-separated `NAME=VALUE` entries), with the entries
/// without `=` that follow it joined back with `:` (what an in-place split left of its list).
pub fn rejoined(environ: &[u8], name: &str) -> Option<OsString> {
    let mut entries = environ.split(|&b| b == 0);
    let prefix = [name.as_bytes(), b"="].concat();
    let first = entries.by_ref().find(|e| e.starts_with(&prefix))?;
    let mut value = first[prefix.len()..].to_vec();
    for e in entries {
        if e.is_empty() || e.contains(&b'=') {
            break;
        }
        value.push(b':');
        value.extend_from_slice(e);
    }
    Some(bytes_to_os(value))
}

#[cfg(unix)]
fn bytes_to_os(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

#[cfg(not(unix))]
fn bytes_to_os(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/proc/self/environ` after the loader split `OCL_ICD_FILENAMES` in place.
    const SPLIT: &[u8] =
        b"HOME=/root\0OCL_ICD_FILENAMES=libpocl.so.2\0libnvidia-opencl.so.1\0libx.so\0PATH=/bin\0";

    #[test]
    fn a_list_split_in_place_is_rejoined() {
        assert_eq!(
            rejoined(SPLIT, "OCL_ICD_FILENAMES").unwrap(),
            "libpocl.so.2:libnvidia-opencl.so.1:libx.so"
        );
        assert_eq!(rejoined(SPLIT, "HOME").unwrap(), "/root");
        assert_eq!(rejoined(SPLIT, "OCL_ICD_VENDORS"), None);
        assert_eq!(started_with(b"HOME=/root\0").len(), 0);
        // The last entry, and a variable whose name only starts the same.
        assert_eq!(rejoined(b"A=1\0B=x\0y", "B").unwrap(), "x:y");
        assert_eq!(
            rejoined(b"OCL_ICD_FILENAMES_X=1\0", "OCL_ICD_FILENAMES"),
            None
        );
    }

    #[test]
    fn the_list_is_restored_unless_the_program_changed_it() {
        let full = OsString::from("libpocl.so.2:libnvidia-opencl.so.1:libx.so");
        let originals = started_with(SPLIT);
        assert_eq!(originals, vec![("OCL_ICD_FILENAMES", full.clone())]);
        let now =
            |v: &'static str| move |name: &str| (name == "OCL_ICD_FILENAMES").then(|| v.into());
        // Cut short by the loader, or whole still (another thread may load OpenCL before
        // the child is spawned): given in full.
        for present in ["libpocl.so.2", "libpocl.so.2:libnvidia-opencl.so.1:libx.so"] {
            assert_eq!(
                restorable(&originals, now(present)),
                vec![("OCL_ICD_FILENAMES", full.clone())],
                "{present}"
            );
        }
        // Changed by the program itself, or unset since: left alone.
        for present in ["libother.so", "libpocl.so"] {
            assert!(restorable(&originals, now(present)).is_empty(), "{present}");
        }
        assert!(restorable(&originals, |_| None).is_empty());
    }
}
