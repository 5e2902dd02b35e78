//! [`Source`]: where a kernel's source comes from (files or text), and reading the files.

use kw_core::includes;
use kw_core::kernel_def::check::DefProblem;
use std::path::PathBuf;

/// Where a kernel's source comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file, read when the definition is built (its directory is searched for includes).
    File(PathBuf),
    /// Several files compiled as one, in order (CLBlast's `common.opencl` then
    /// `xgemm_part1.opencl` ...): their texts are joined with a `#line 1 "FILE"` directive
    /// before each, so the compiler's messages name the right file and line. Each file's
    /// directory is searched for includes; the first file's name picks the backend.
    Files(Vec<PathBuf>),
    /// Text in memory, with the file name used in messages.
    Text {
        /// The name shown in messages and used to pick the backend (`.cl` / `.cu`).
        file_name: String,
        /// The source text.
        text: String,
    },
}

impl Source {
    /// A source file.
    pub fn file(path: impl Into<PathBuf>) -> Source {
        Source::File(path.into())
    }

    /// Several source files compiled as one translation unit, in order (see
    /// [`Source::Files`]).
    pub fn files<P: Into<PathBuf>>(paths: impl IntoIterator<Item = P>) -> Source {
        Source::Files(paths.into_iter().map(Into::into).collect())
    }

    /// Source text with a file name (`vector_add.cl`).
    pub fn text(file_name: impl Into<String>, text: impl Into<String>) -> Source {
        Source::Text {
            file_name: file_name.into(),
            text: text.into(),
        }
    }

    pub(super) fn file_name(&self) -> String {
        match self {
            Source::File(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            Source::Files(paths) => paths
                .first()
                .map(|p| Source::File(p.clone()).file_name())
                .unwrap_or_default(),
            Source::Text { file_name, .. } => file_name.clone(),
        }
    }
}

/// Reads `paths` and joins their texts, each after a `#line` directive ([`kw_core::kernel_def::line_directive`]); the directories
/// to search for includes; what could not be read.
pub(super) fn read_files(paths: &[PathBuf]) -> (String, Vec<PathBuf>, Vec<DefProblem>) {
    let mut text = String::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut problems = Vec::new();
    if paths.is_empty() {
        problems.push(DefProblem {
            location: "source".into(),
            message: "Source::files was given no file".into(),
        });
    }
    for path in paths {
        let rules = kw_core::files::ReadRules::new("kernel source", kw_core::files::caps::SOURCE);
        match kw_core::files::read_to_string(path, rules) {
            Ok(t) => {
                text.push_str(&kw_core::kernel_def::line_directive(
                    &path.display().to_string(),
                ));
                text.push_str(&t);
                if !t.ends_with('\n') {
                    text.push('\n');
                }
                let dir = includes::parent_dir(path);
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            Err(e) => problems.push(DefProblem {
                location: "source".into(),
                message: format!("cannot read {e}"),
            }),
        }
    }
    (text, dirs, problems)
}
