//! Finding the headers a source includes (`#include "name"`), so that kernel definitions
//! embed them and compile anywhere.

use crate::kernel_def::Header;
use std::path::{Path, PathBuf};

/// The names in `#include "name"` lines of `text`, in order.
pub fn quoted_includes(text: &str) -> Vec<String> {
    includes(text)
        .into_iter()
        .filter(|(_, angle)| !angle)
        .map(|(name, _)| name)
        .collect()
}

/// The names in `#include "name"` (false) and `#include <name>` (true) lines of `text`, in
/// order.
fn includes(text: &str) -> Vec<(String, bool)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let (close, angle) = match rest.chars().next()? {
                '"' => ('"', false),
                '<' => ('>', true),
                _ => return None,
            };
            let rest = &rest[1..];
            Some((rest[..rest.find(close)?].to_string(), angle))
        })
        .collect()
}

/// Why `name` cannot name an embedded header (`None` when it can): kw embeds headers by the
/// name they are included by and writes them under one directory, so the name must be a
/// relative path that stays below it.
pub fn header_name_problem(name: &str) -> Option<String> {
    let below = !name.is_empty()
        && Path::new(name)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    (!below).then(|| {
        format!(
            "header name `{name}` must be a relative path without `..` (kw embeds headers by \
             the name they are included by): add its directory to the include directories \
             and include it by its name there"
        )
    })
}

/// An include that could not be embedded: its name, and why (`None`: found nowhere).
pub type Unresolved = (String, Option<String>);

/// Resolves every quoted include of `text` (recursively) against `dirs`, returning the
/// headers found and those that could not be ([`Unresolved`]).
pub fn resolve(text: &str, dirs: &[PathBuf]) -> (Vec<Header>, Vec<Unresolved>) {
    resolve_in(text, dirs, &[])
}

/// [`resolve`], with include directories (a compiler's `-I`): a quoted include is looked up
/// in `dirs`, then in `include_dirs`; an `#include <name>` in `include_dirs` only, and one
/// found nowhere is left to the compiler (a system header), not unresolved. A header found
/// that cannot be read (too large, not a regular file) is unresolved with the reason, and
/// so is a name that goes up with `..` ([`header_name_problem`]).
pub fn resolve_in(
    text: &str,
    dirs: &[PathBuf],
    include_dirs: &[PathBuf],
) -> (Vec<Header>, Vec<Unresolved>) {
    let mut headers: Vec<Header> = Vec::new();
    let mut unresolved: Vec<Unresolved> = Vec::new();
    let mut system: Vec<String> = Vec::new();
    let mut queue = includes(text);
    while let Some((name, angle)) = queue.pop() {
        if headers.iter().any(|h| h.name == name)
            || unresolved.iter().any(|(n, _)| *n == name)
            || system.contains(&name)
        {
            continue;
        }
        let searched: Vec<&PathBuf> = if angle {
            include_dirs.iter().collect()
        } else {
            dirs.iter().chain(include_dirs).collect()
        };
        // The first directory that holds the name decides: read, or why not.
        let found = searched
            .iter()
            .map(|d| d.join(&name))
            .find(|p| std::fs::symlink_metadata(p).is_ok())
            .map(|p| {
                let rules = crate::files::ReadRules::new("header", crate::files::caps::SOURCE);
                crate::files::read_to_string(&p, rules).map_err(|e| e.to_string())
            });
        match found {
            Some(Ok(text)) => match header_name_problem(&name) {
                Some(why) => unresolved.push((name, Some(why))),
                None => {
                    queue.extend(includes(&text));
                    headers.push(Header { name, text });
                }
            },
            Some(Err(why)) => unresolved.push((name, Some(why))),
            None if angle => system.push(name),
            None => unresolved.push((name, None)),
        }
    }
    headers.sort_by(|a, b| a.name.cmp(&b.name));
    (headers, unresolved)
}

/// The directory of a file, for relative includes (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_quoted_includes_only() {
        let text = "#include \"a.h\"\n  #  include \"sub/b.h\" // x\n#include <math.h>\nint x;\n";
        assert_eq!(quoted_includes(text), vec!["a.h", "sub/b.h"]);
    }

    #[test]
    fn resolves_recursively_and_reports_missing() {
        let dir = std::env::temp_dir().join(format!("kw-includes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.h"), "#include \"b.h\"\n#define A 1\n").unwrap();
        std::fs::write(dir.join("b.h"), "#define B 2\n").unwrap();
        let (headers, missing) = resolve(
            "#include \"a.h\"\n#include \"nope.h\"\n",
            std::slice::from_ref(&dir),
        );
        let names: Vec<&str> = headers.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, vec!["a.h", "b.h"]);
        assert_eq!(missing, vec![("nope.h".to_string(), None)]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
