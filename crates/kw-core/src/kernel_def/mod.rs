//! [`KernelDef`]: everything needed to compile and launch a tunable kernel without the
//! application that declared it. Captures store it as JSON, so its JSON form is a contract:
//! it carries [`KernelDef::format_version`], and the tests load stored fixtures.
//!
//! Evaluation (geometry, defines for a configuration) lives in [`eval`]; the checks that
//! report every problem of a definition in [`check`]; the restrictions that depend on a
//! launch in [`launch_check`]; an objective's value for a configuration in `objective.rs`.

pub mod check;
pub mod eval;
pub mod launch_check;
mod objective;

use crate::device::BackendKind;
use crate::expr::{ArgRef, Expr};
use crate::scalar::ScalarType;
use crate::space::Parameter;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// The version of the JSON form of [`KernelDef`] that this library writes.
pub const KERNEL_DEF_FORMAT_VERSION: u32 = 1;

/// The kernel's source: the main file and the headers it includes, all embedded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelSource {
    /// The main file's name (for error messages and `#line`), e.g. `vector_add.cl`.
    pub file_name: String,
    /// The main file's text.
    pub text: String,
    /// Headers the source includes, by the name used in `#include "..."`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<Header>,
}

/// An embedded header file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The name used in `#include "..."` (a relative path).
    pub name: String,
    /// The header's text.
    pub text: String,
}

/// Whether an argument is passed by value or is a device buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgKind {
    /// A scalar passed by value.
    Scalar,
    /// A device buffer (pointer) of elements of the argument's type.
    Buffer,
}

/// How a kernel uses a buffer argument (scalars are always `in`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only.
    #[default]
    In,
    /// Written only (its previous contents do not matter).
    Out,
    /// Read and written.
    InOut,
}

/// One kernel argument.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArgDef {
    /// Its name (expressions refer to it as `args.NAME`).
    pub name: String,
    /// The scalar type, or the element type of a buffer.
    #[serde(rename = "type")]
    pub ty: ScalarType,
    /// Scalar or buffer.
    pub kind: ArgKind,
    /// In, out or in/out.
    #[serde(default)]
    pub access: Access,
    /// For buffers: the number of elements the kernel uses at least (an expression over
    /// arguments, problem size and device). A launch refuses a shorter buffer; capture
    /// records the whole buffer. `None`: the product of the problem size's axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<Expr>,
    /// For output buffers: how a result is compared with the reference
    /// ([`crate::tolerance`]). `None`: the default (integers exactly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<crate::tolerance::Tolerance>,
}

/// A `__local` memory argument (OpenCL) that the runtime passes itself, at a given position
/// of the kernel's parameter list, sized per configuration: the application does not pass
/// it. Several may stand anywhere among the application's arguments (`args`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalArgDef {
    /// Its name (for messages).
    pub name: String,
    /// Its position in the kernel's parameter list (0-based, counting every parameter).
    pub position: usize,
    /// The element type.
    #[serde(rename = "type")]
    pub ty: ScalarType,
    /// The number of elements (an expression over parameters, arguments, problem size and
    /// device); the bytes passed are this times the element size.
    pub len: Expr,
}

/// A constant-memory symbol of the module (CUDA `__constant__ T name[len];`), set by the
/// application from host data and written into every configuration's module before its
/// launches. Captures carry its contents; replay restores them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SymbolDef {
    /// The symbol's name in the source (a variable at namespace scope).
    pub name: String,
    /// The element type.
    #[serde(rename = "type")]
    pub ty: ScalarType,
    /// The number of elements it holds at most (data set must not be longer).
    pub len: u64,
}

/// Checks a symbol's contents against its declaration: same name, same element type, a
/// whole number of elements, no more than declared. The message names the symbol.
pub fn check_symbol_value(
    def: &SymbolDef,
    value: &crate::scalar::SymbolValue,
) -> Result<(), String> {
    if value.name != def.name {
        return Err(format!(
            "contents for `{}` given to constant symbol `{}`",
            value.name, def.name
        ));
    }
    if value.ty != def.ty {
        return Err(format!(
            "constant symbol `{}` holds {}, the data is {}",
            def.name, def.ty, value.ty
        ));
    }
    let size = def.ty.size().max(1);
    let elements = value.bytes.len() / size;
    if !value.bytes.len().is_multiple_of(size) || elements as u64 > def.len || elements == 0 {
        return Err(format!(
            "constant symbol `{}` holds 1 to {} elements of {}; {} bytes were given",
            def.name,
            def.len,
            def.ty,
            value.bytes.len()
        ));
    }
    Ok(())
}

/// How the grid (number of blocks) is derived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grid {
    /// The number of blocks per axis, given directly.
    Blocks([Expr; 3]),
    /// Divisors of the problem size: `blocks[i] = div_ceil(problem_size[i], divisors[i])`.
    Divisors([Expr; 3]),
}

/// A tunable kernel's full definition. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelDef {
    /// The version of this JSON form ([`KERNEL_DEF_FORMAT_VERSION`] when written).
    pub format_version: u32,
    /// The backend the source is written for.
    pub backend: BackendKind,
    /// The source, with its headers.
    pub source: KernelSource,
    /// The kernel function's name.
    pub kernel_name: String,
    /// Template arguments (CUDA only), as expressions (e.g. `param("T")`, `lit("float")`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template_args: Vec<Expr>,
    /// Extra compiler flags, passed as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compiler_flags: Vec<String>,
    /// Preprocessor defines, `-DNAME=VALUE`, with values as expressions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defines: BTreeMap<String, Expr>,
    /// Whether every tuning parameter is also passed as a define (`-Dblock_size_x=128`).
    #[serde(default = "yes")]
    pub params_as_defines: bool,
    /// The tuning parameters, in order.
    pub parameters: Vec<Parameter>,
    /// Restrictions every configuration must satisfy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restrictions: Vec<Expr>,
    /// What tuning optimises ([`crate::objective`]); `None`: the median time, lower is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<crate::objective::ObjectiveDef>,
    /// The tuning key: names the kernel in captures and wisdom files (e.g. `vector_add`).
    pub tuning_key: String,
    /// The problem size (1 to 3 axes) as expressions over the arguments.
    pub problem_size: Vec<Expr>,
    /// The block (work-group) size per axis.
    pub block_size: [Expr; 3],
    /// How the grid is derived.
    pub grid: Grid,
    /// Dynamic shared (local) memory per block, in bytes.
    pub shared_memory: Expr,
    /// The kernel's arguments, in order: what the application passes.
    pub args: Vec<ArgDef>,
    /// `__local` memory arguments the runtime inserts at their positions (OpenCL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_args: Vec<LocalArgDef>,
    /// Constant-memory symbols the application sets (CUDA).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolDef>,
}

fn yes() -> bool {
    true
}

/// Why a kernel definition could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DefFormatError {
    /// Not valid JSON for a kernel definition.
    #[error("invalid kernel definition JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a newer version of the format.
    #[error(
        "kernel definition format version {found} is newer than supported version {supported}"
    )]
    Version {
        /// The version in the document.
        found: u32,
        /// The newest version this library reads.
        supported: u32,
    },
}

impl KernelDef {
    /// The definition as pretty-printed JSON (the stored contract).
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a definition from JSON, refusing versions newer than this library's.
    pub fn from_json(text: &str) -> Result<KernelDef, DefFormatError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            format_version: u32,
        }
        let v: VersionOnly = serde_json::from_str(text)?;
        if v.format_version > KERNEL_DEF_FORMAT_VERSION {
            return Err(DefFormatError::Version {
                found: v.format_version,
                supported: KERNEL_DEF_FORMAT_VERSION,
            });
        }
        Ok(serde_json::from_str(text)?)
    }

    /// The index of the argument called `name`.
    pub fn arg_index(&self, name: &str) -> Option<usize> {
        self.args.iter().position(|a| a.name == name)
    }

    /// The definition with every argument named in an expression (`args.n`) referred to by
    /// its index instead (`args[3]`): the same values, found without comparing names. The
    /// runtime evaluates launch-time expressions (problem size, buffer lengths, geometry)
    /// of this form on every launch; messages quote the definition as written.
    pub fn with_arg_names_resolved(&self) -> KernelDef {
        let mut def = self.clone();
        let index: Vec<String> = def.args.iter().map(|a| a.name.clone()).collect();
        let mut resolve = |e: &mut Expr| {
            e.visit_mut(&mut |node| {
                if let Expr::Arg(ArgRef::Name(n)) = node {
                    if let Some(i) = index.iter().position(|a| a == n) {
                        *node = Expr::Arg(ArgRef::Index(i));
                    }
                }
            })
        };
        def.problem_size.iter_mut().for_each(&mut resolve);
        def.block_size.iter_mut().for_each(&mut resolve);
        match &mut def.grid {
            Grid::Blocks(g) | Grid::Divisors(g) => g.iter_mut().for_each(&mut resolve),
        }
        resolve(&mut def.shared_memory);
        def.local_args.iter_mut().for_each(|l| resolve(&mut l.len));
        def.args
            .iter_mut()
            .filter_map(|a| a.len.as_mut())
            .for_each(&mut resolve);
        def
    }

    /// Every expression of the definition with a label saying where it is
    /// (`block_size[0]`, `define FOO`, `restriction 2`, ...).
    pub fn labelled_exprs(&self) -> Vec<(String, &Expr)> {
        let mut out: Vec<(String, &Expr)> = Vec::new();
        for (i, e) in self.problem_size.iter().enumerate() {
            out.push((format!("problem_size[{i}]"), e));
        }
        for (i, e) in self.block_size.iter().enumerate() {
            out.push((format!("block_size[{i}]"), e));
        }
        let (what, grid) = match &self.grid {
            Grid::Blocks(g) => ("grid_size", g),
            Grid::Divisors(g) => ("grid_divisors", g),
        };
        for (i, e) in grid.iter().enumerate() {
            out.push((format!("{what}[{i}]"), e));
        }
        out.push(("shared_memory".into(), &self.shared_memory));
        for l in &self.local_args {
            out.push((format!("local argument `{}` length", l.name), &l.len));
        }
        for (name, e) in &self.defines {
            out.push((format!("define {name}"), e));
        }
        for (i, e) in self.template_args.iter().enumerate() {
            out.push((format!("template_args[{i}]"), e));
        }
        for (i, e) in self.restrictions.iter().enumerate() {
            out.push((format!("restriction {i} `{e}`"), e));
        }
        out
    }
}

/// A `#line 1 "PATH"` directive naming `path` for compiler messages (`"` and `\` escaped,
/// line breaks left out).
pub fn line_directive(path: &str) -> String {
    let name: String = path
        .chars()
        .filter(|c| *c != '\n' && *c != '\r')
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("#line 1 \"{name}\"\n")
}

/// A compiler's messages with the lines of the source it was given (`<kernel>:7:10:`, what
/// NVIDIA's OpenCL compiler writes, which ignores `#line`) named as the source's `#line`
/// directives name them (`second.cl:3:10:`). Messages that name a file already are left as
/// they are.
pub fn name_raw_lines(source: &str, log: &str) -> String {
    const RAW: &str = "<kernel>:";
    if !log.contains(RAW) {
        return log.to_string();
    }
    // For each raw line (1-based): the file and line a `#line` directive above it gives.
    let mut map: Vec<Option<(String, u64)>> = Vec::new();
    let mut current: Option<(String, u64)> = None;
    for line in source.lines() {
        map.push(current.clone());
        current = match parse_line_directive(line) {
            Some((Some(file), n)) => Some((file, n)),
            // `#line N`: the same file from line N.
            Some((None, n)) => current.map(|(f, _)| (f, n)),
            None => current.map(|(f, n)| (f, n.saturating_add(1))),
        };
    }
    // The end of the source (where a missing `}` is reported).
    map.push(current);
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find(RAW) {
        out.push_str(&rest[..at]);
        let after = &rest[at + RAW.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let named = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|raw| map.get(raw.checked_sub(1)?)?.clone());
        match named {
            Some((file, line)) if after[digits..].starts_with(':') => {
                out.push_str(&format!("{file}:{line}"));
                rest = &after[digits..];
            }
            _ => {
                out.push_str(RAW);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `#line N "FILE"` or `#line N`: the file (when named) and the number of the line after it.
fn parse_line_directive(line: &str) -> Option<(Option<String>, u64)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line")?.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = rest[..digits].parse().ok()?;
    let after = rest[digits..].trim();
    if after.is_empty() {
        return Some((None, n));
    }
    let quoted = after.strip_prefix('"')?;
    let mut name = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next()?),
            '"' => return Some((Some(name), n)),
            c => name.push(c),
        }
    }
    None
}

#[cfg(test)]
pub(crate) fn sample_def() -> KernelDef {
    use crate::expr::{arg, lit, param};
    KernelDef {
        format_version: KERNEL_DEF_FORMAT_VERSION,
        backend: BackendKind::Opencl,
        source: KernelSource {
            file_name: "vector_add.cl".into(),
            text: "#include \"common.h\"\n__kernel void vector_add(__global float* c, \
                   __global const float* a, __global const float* b, int n) {}\n"
                .into(),
            headers: vec![Header {
                name: "common.h".into(),
                text: "#define ONE 1\n".into(),
            }],
        },
        kernel_name: "vector_add".into(),
        template_args: vec![],
        compiler_flags: vec!["-cl-fast-relaxed-math".into()],
        defines: [("ELEMS".to_string(), param("elems_per_thread"))]
            .into_iter()
            .collect(),
        params_as_defines: true,
        parameters: vec![
            Parameter::new("block_size_x", [32, 64, 128, 256]).with_default(128),
            Parameter::new("elems_per_thread", [1, 2, 4]),
        ],
        restrictions: vec![(param("block_size_x") * param("elems_per_thread")).le(512)],
        objective: None,
        tuning_key: "vector_add".into(),
        problem_size: vec![arg("n")],
        block_size: [param("block_size_x"), lit(1), lit(1)],
        grid: Grid::Divisors([
            param("block_size_x") * param("elems_per_thread"),
            lit(1),
            lit(1),
        ]),
        shared_memory: lit(0),
        args: vec![
            ArgDef {
                name: "c".into(),
                ty: ScalarType::F32,
                kind: ArgKind::Buffer,
                access: Access::Out,
                len: None,
                tolerance: None,
            },
            ArgDef {
                name: "a".into(),
                ty: ScalarType::F32,
                kind: ArgKind::Buffer,
                access: Access::In,
                len: None,
                tolerance: None,
            },
            ArgDef {
                name: "b".into(),
                ty: ScalarType::F32,
                kind: ArgKind::Buffer,
                access: Access::In,
                len: None,
                tolerance: None,
            },
            ArgDef {
                name: "n".into(),
                ty: ScalarType::I32,
                kind: ArgKind::Scalar,
                access: Access::In,
                len: None,
                tolerance: None,
            },
        ],
        local_args: vec![],
        symbols: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_fixture_loads_and_matches() {
        let text = include_str!("../../tests/fixtures/kernel_def_v1.json");
        let def = KernelDef::from_json(text).unwrap();
        assert_eq!(def, sample_def());
        // Writing it again gives the stored text (the JSON form is stable).
        assert_eq!(def.to_json().trim(), text.trim());
    }

    #[test]
    fn newer_versions_are_refused() {
        let text = sample_def()
            .to_json()
            .replace("\"format_version\": 1", "\"format_version\": 99");
        let err = KernelDef::from_json(&text).unwrap_err();
        assert!(err.to_string().contains("99"), "{err}");
    }

    #[test]
    fn labels_cover_every_expression() {
        let def = sample_def();
        let labels: Vec<String> = def.labelled_exprs().into_iter().map(|(l, _)| l).collect();
        assert!(labels.contains(&"grid_divisors[0]".to_string()));
        assert!(labels.contains(&"define ELEMS".to_string()));
        assert_eq!(labels.len(), 1 + 3 + 3 + 1 + 1 + 1);
    }

    /// NVIDIA's OpenCL compiler names lines of the text it was given (`<kernel>:L:C`); kw
    /// names them by the `#line` directives of that text, as PoCL does itself.
    #[test]
    fn raw_compiler_lines_are_named_by_the_line_directives() {
        let source = format!(
            "{}#define A 1\n#define B 2\n{}__kernel void k() {{\n  int i;\n  y = nope;\n}}\n",
            line_directive("first.cl"),
            line_directive("dir/sec\"ond.cl")
        );
        // Raw line 7 is `  y = nope;`, line 3 of the second file.
        let log = "<kernel>:7:7: error: use of undeclared identifier 'nope'\n  y = nope;\n<kernel>:2:1: note\n";
        assert_eq!(
            name_raw_lines(&source, log),
            "dir/sec\"ond.cl:3:7: error: use of undeclared identifier 'nope'\n  y = nope;\nfirst.cl:1:1: note\n"
        );
        // Lines beyond the source, a line 0, no directive, or a log naming files: unchanged.
        for log in [
            "<kernel>:99:1: x",
            "<kernel>:0:1: x",
            "<kernel>:x",
            "second.cl:3:7: x",
        ] {
            assert_eq!(name_raw_lines(&source, log), log);
        }
        assert_eq!(
            name_raw_lines("int x;\n", "<kernel>:1:1: e"),
            "<kernel>:1:1: e"
        );
        // `#line N` keeps the file; the end of the source (a missing `}`) is named too.
        let source = format!("{}int a;\n#line 40\nint b = ;\n", line_directive("k.cl"));
        assert_eq!(
            name_raw_lines(&source, "<kernel>:4:9: e\n<kernel>:5:1: end"),
            "k.cl:40:9: e\nk.cl:41:1: end"
        );
    }
}
