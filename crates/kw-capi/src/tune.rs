//! `kw_set_tune_mode`, `kw_set_tune_ranks`: `KW_TUNE` and `KW_TUNE_RANKS` from C, with the
//! environment variables' spellings (the call wins over the environment).

use crate::ffi::text;
use crate::status::{guard, CError, Status};
use std::ffi::{c_char, c_int};

/// `kw_set_tune_mode`: `"off"`, `"record"` or `"online"`, as `KW_TUNE` says.
///
/// # Safety
/// `mode` is a valid NUL-terminated string (or NULL, an error).
#[no_mangle]
pub unsafe extern "C" fn kw_set_tune_mode(mode: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let mode = unsafe { text(mode, "the tune mode") }?;
        let mode = kernel_wisdom::online::parse_mode(mode)
            .map_err(|why| CError::new(Status::Invalid, format!("tune mode `{mode}`: {why}")))?;
        kernel_wisdom::set_tune_mode(mode);
        Ok(())
    })
}

/// `kw_set_tune_ranks`: `"own"` or `"shared"`, as `KW_TUNE_RANKS` says.
///
/// # Safety
/// `ranks` is a valid NUL-terminated string (or NULL, an error).
#[no_mangle]
pub unsafe extern "C" fn kw_set_tune_ranks(ranks: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let ranks = unsafe { text(ranks, "the tune ranks") }?;
        let ranks = kernel_wisdom::online::parse_ranks(ranks)
            .map_err(|why| CError::new(Status::Invalid, format!("tune ranks `{ranks}`: {why}")))?;
        kernel_wisdom::set_tune_ranks(ranks);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_wisdom::{tune_settings, TuneMode, TuneRanks};

    /// The only test of this crate that changes the tune settings (to values that launch
    /// nothing in the background).
    #[test]
    fn spellings_are_the_environment_variables() {
        // SAFETY: NUL-terminated literals and NULL.
        unsafe {
            assert_eq!(kw_set_tune_ranks(c"shared".as_ptr()), Status::Ok as c_int);
            assert_eq!(tune_settings().ranks, TuneRanks::Shared);
            assert_eq!(kw_set_tune_mode(c"off".as_ptr()), Status::Ok as c_int);
            assert_eq!(tune_settings().mode, TuneMode::Off);
            assert_eq!(
                kw_set_tune_mode(c"sometimes".as_ptr()),
                Status::Invalid as c_int
            );
            assert_eq!(kw_set_tune_mode(std::ptr::null()), Status::Null as c_int);
            assert_eq!(kw_set_tune_ranks(c"own".as_ptr()), Status::Ok as c_int);
            assert_eq!(tune_settings().ranks, TuneRanks::Own);
        }
        assert_eq!(
            tune_settings().mode,
            TuneMode::Off,
            "an invalid value changes nothing"
        );
    }
}
