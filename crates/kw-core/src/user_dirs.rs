//! The per-user directories of kernel-wisdom, after the XDG base directories:
//!
//! | what | environment variable | default |
//! | --- | --- | --- |
//! | compile cache ([`crate::compile_cache`]) | `KW_CACHE_DIR` | `$XDG_CACHE_HOME/kernel-wisdom`, else `~/.cache/kernel-wisdom` |
//! | wisdom `kw tune` writes and selection reads | [`USER_WISDOM_DIR_ENV`] | `$XDG_DATA_HOME/kernel-wisdom/wisdom`, else `~/.local/share/kernel-wisdom/wisdom` |
//! | state: results logs of `kw tune` | [`STATE_DIR_ENV`] | `$XDG_STATE_HOME/kernel-wisdom`, else `~/.local/state/kernel-wisdom` |
//!
//! `None` when neither the variables nor `HOME` say where.

use std::path::PathBuf;

/// Overrides the per-user wisdom directory.
pub const USER_WISDOM_DIR_ENV: &str = "KW_USER_WISDOM_DIR";
/// Overrides the state directory (results logs in its `logs/`).
pub const STATE_DIR_ENV: &str = "KW_STATE_DIR";

/// The directory `own` names, else `$XDG/kernel-wisdom/sub`, else
/// `$HOME/home_rel/kernel-wisdom/sub` (`sub` empty: none), reading variables with `var`
/// (empty values count as unset).
pub fn resolve(
    var: &dyn Fn(&str) -> Option<String>,
    own: &str,
    xdg: &str,
    home_rel: &str,
    sub: &str,
) -> Option<PathBuf> {
    let nonempty = |name: &str| var(name).filter(|v| !v.is_empty());
    let under = |base: PathBuf| {
        let d = base.join("kernel-wisdom");
        if sub.is_empty() {
            d
        } else {
            d.join(sub)
        }
    };
    nonempty(own)
        .map(PathBuf::from)
        .or_else(|| nonempty(xdg).map(|d| under(PathBuf::from(d))))
        .or_else(|| nonempty("HOME").map(|h| under(PathBuf::from(h).join(home_rel))))
}

/// The per-user wisdom directory (see the module's table).
pub fn user_wisdom_dir() -> Option<PathBuf> {
    resolve(
        &crate::diag::env_var,
        USER_WISDOM_DIR_ENV,
        "XDG_DATA_HOME",
        ".local/share",
        "wisdom",
    )
}

/// The state directory (see the module's table).
pub fn state_dir() -> Option<PathBuf> {
    resolve(
        &crate::diag::env_var,
        STATE_DIR_ENV,
        "XDG_STATE_HOME",
        ".local/state",
        "",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn with(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |n| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_variable_then_xdg_then_home() {
        let w = |v: &'static [(&'static str, &'static str)]| {
            resolve(
                &with(v),
                USER_WISDOM_DIR_ENV,
                "XDG_DATA_HOME",
                ".local/share",
                "wisdom",
            )
        };
        assert_eq!(
            w(&[("KW_USER_WISDOM_DIR", "/w"), ("HOME", "/h")]).unwrap(),
            Path::new("/w")
        );
        assert_eq!(
            w(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]).unwrap(),
            Path::new("/x/kernel-wisdom/wisdom")
        );
        assert_eq!(
            w(&[("XDG_DATA_HOME", ""), ("HOME", "/h")]).unwrap(),
            Path::new("/h/.local/share/kernel-wisdom/wisdom")
        );
        assert_eq!(w(&[]), None);
        let s = resolve(
            &with(&[("HOME", "/h")]),
            STATE_DIR_ENV,
            "XDG_STATE_HOME",
            ".local/state",
            "",
        );
        assert_eq!(s.unwrap(), Path::new("/h/.local/state/kernel-wisdom"));
    }
}
