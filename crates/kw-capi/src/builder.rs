//! `kw_builder_*`: declaring a tunable kernel from C, every expression given as text and
//! parsed at once (a parse error is returned by the call that gave the text).

use crate::ffi::{expr, opt_text, put, slice, text, texts};
use crate::handles::{Kind, Registry};
use crate::status::{guard, CError, Status};
use crate::types::{access, backend, scalar_type};
use kernel_wisdom::{Expr, KernelBuilder, Source, Value};
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, PoisonError};

/// The live builders.
pub static BUILDERS: Registry<Mutex<KernelBuilder>> = Registry::new(Kind::Builder);

fn with(b: *mut c_void, f: impl FnOnce(&mut KernelBuilder) -> Result<(), CError>) -> c_int {
    guard(|| {
        let obj = BUILDERS.get(b)?;
        let mut builder = obj.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut builder)
    })
}

/// Three axes: `x` required, `y` and `z` optional (`fill` when null, or left out when
/// `fill` is `None`, for the problem size).
unsafe fn axes(
    x: *const c_char,
    y: *const c_char,
    z: *const c_char,
    what: &str,
    fill: Option<i64>,
) -> Result<Vec<Expr>, CError> {
    let mut out = Vec::new();
    let mut ended = false;
    for (p, axis) in [(x, "x"), (y, "y"), (z, "z")] {
        let location = format!("{what} {axis}");
        // SAFETY: each is null or a string (the caller's promise).
        match unsafe { opt_text(p, &location) }? {
            Some(t) if ended => {
                return Err(CError::new(
                    Status::Invalid,
                    format!("{location} `{t}` is given, but an earlier axis is null"),
                ))
            }
            Some(t) => out.push(expr(t, &location)?),
            None if axis == "x" => {
                return Err(CError::new(
                    Status::Null,
                    format!("{location} is a null string"),
                ))
            }
            None => match fill {
                Some(v) => out.push(Expr::from(v)),
                None => ended = true,
            },
        }
    }
    Ok(out)
}

fn three(mut v: Vec<Expr>) -> (Expr, Expr, Expr) {
    let z = v.pop().unwrap_or_else(|| Expr::from(1));
    let y = v.pop().unwrap_or_else(|| Expr::from(1));
    let x = v.pop().unwrap_or_else(|| Expr::from(1));
    (x, y, z)
}

/// `kw_builder_new`: a builder for kernel `kernel_name` in the source file `source_file`
/// (read when the kernel is made; `.cu` files are CUDA, others OpenCL).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_new(
    out: *mut *mut c_void,
    kernel_name: *const c_char,
    source_file: *const c_char,
) -> c_int {
    guard(|| {
        crate::ffi::need_out(out, "kw_builder_new")?;
        // SAFETY (both): strings, as the header requires.
        let name = unsafe { text(kernel_name, "kernel_name") }?;
        let file = unsafe { text(source_file, "source_file") }?;
        let b = KernelBuilder::new(name, Source::file(file));
        // SAFETY: checked non-null above.
        unsafe { put(out, BUILDERS.insert(Mutex::new(b)), "kw_builder_new") }
    })
}

/// `kw_builder_new_from_string`: a builder for kernel `kernel_name` whose source is
/// `source_text`; `file_name` names it in messages and picks the backend by extension.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_new_from_string(
    out: *mut *mut c_void,
    kernel_name: *const c_char,
    file_name: *const c_char,
    source_text: *const c_char,
) -> c_int {
    guard(|| {
        crate::ffi::need_out(out, "kw_builder_new_from_string")?;
        // SAFETY (all three): strings, as the header requires.
        let name = unsafe { text(kernel_name, "kernel_name") }?;
        let file = unsafe { text(file_name, "file_name") }?;
        let src = unsafe { text(source_text, "source_text") }?;
        let b = KernelBuilder::new(name, Source::text(file, src));
        // SAFETY: checked non-null above.
        unsafe {
            put(
                out,
                BUILDERS.insert(Mutex::new(b)),
                "kw_builder_new_from_string",
            )
        }
    })
}

/// `kw_builder_free`: frees a builder (null: nothing to do). Kernels made from it live on.
#[no_mangle]
pub extern "C" fn kw_builder_free(b: *mut c_void) -> c_int {
    guard(|| BUILDERS.remove(b))
}

/// `kw_builder_backend`
#[no_mangle]
pub extern "C" fn kw_builder_backend(b: *mut c_void, which: c_int) -> c_int {
    with(b, |k| {
        if let Some(kind) = backend(which)? {
            k.backend(kind);
        }
        Ok(())
    })
}

/// `kw_builder_include_dir`
#[no_mangle]
pub unsafe extern "C" fn kw_builder_include_dir(b: *mut c_void, dir: *const c_char) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        k.include_dir(unsafe { text(dir, "dir") }?);
        Ok(())
    })
}

fn tune_values(
    k: &mut KernelBuilder,
    name: &str,
    values: Vec<Value>,
    default: Value,
) -> Result<(), CError> {
    if values.is_empty() {
        return Err(CError::new(
            Status::Invalid,
            format!("tuning parameter `{name}`: no values given"),
        ));
    }
    k.tune(name, values, default);
    Ok(())
}

/// `kw_builder_tune_int`: a tuning parameter with integer values.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_tune_int(
    b: *mut c_void,
    name: *const c_char,
    values: *const i64,
    count: usize,
    default_value: i64,
) -> c_int {
    with(b, |k| {
        // SAFETY (both): as the header requires.
        let name = unsafe { text(name, "name") }?;
        let vals = unsafe { slice(values, count, "values") }?;
        let vals = vals.iter().map(|&v| Value::Int(v)).collect();
        tune_values(k, name, vals, Value::Int(default_value))
    })
}

/// `kw_builder_tune_double`: a tuning parameter with floating-point values.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_tune_double(
    b: *mut c_void,
    name: *const c_char,
    values: *const f64,
    count: usize,
    default_value: f64,
) -> c_int {
    with(b, |k| {
        // SAFETY (both): as the header requires.
        let name = unsafe { text(name, "name") }?;
        let vals = unsafe { slice(values, count, "values") }?;
        let vals = vals.iter().map(|&v| Value::Float(v)).collect();
        tune_values(k, name, vals, Value::Float(default_value))
    })
}

/// `kw_builder_tune_string`: a tuning parameter with string values (type names, ...).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_tune_string(
    b: *mut c_void,
    name: *const c_char,
    values: *const *const c_char,
    count: usize,
    default_value: *const c_char,
) -> c_int {
    with(b, |k| {
        // SAFETY (all): as the header requires.
        let name = unsafe { text(name, "name") }?;
        let vals = unsafe { texts(values, count, "values") }?;
        let default = unsafe { text(default_value, "default_value") }?;
        let vals = vals.iter().map(|v| Value::Str(v.to_string())).collect();
        tune_values(k, name, vals, Value::Str(default.to_string()))
    })
}

/// `kw_builder_params_as_defines`
#[no_mangle]
pub extern "C" fn kw_builder_params_as_defines(b: *mut c_void, on: c_int) -> c_int {
    with(b, |k| {
        k.params_as_defines(on != 0);
        Ok(())
    })
}

/// `kw_builder_restriction`: a restriction as expression text (Kernel Tuner's Python style
/// is accepted).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_restriction(b: *mut c_void, expr_text: *const c_char) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let t = unsafe { text(expr_text, "restriction") }?;
        k.restriction(expr(t, "restriction")?);
        Ok(())
    })
}

/// `kw_builder_problem_size`: 1 to 3 axes (`y`, `z` may be null).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_problem_size(
    b: *mut c_void,
    x: *const c_char,
    y: *const c_char,
    z: *const c_char,
) -> c_int {
    with(b, |k| {
        // SAFETY: strings or null, as the header requires.
        k.problem_size(unsafe { axes(x, y, z, "problem size", None) }?);
        Ok(())
    })
}

/// Sets three geometry axes given as text (null axes are 1).
///
/// # Safety
/// Each axis is null or a string.
unsafe fn geometry(
    b: *mut c_void,
    axes_text: [*const c_char; 3],
    what: &str,
    set: impl FnOnce(&mut KernelBuilder, Expr, Expr, Expr),
) -> c_int {
    with(b, |k| {
        let [x, y, z] = axes_text;
        // SAFETY: strings or null, as the header requires.
        let (x, y, z) = three(unsafe { axes(x, y, z, what, Some(1)) }?);
        set(k, x, y, z);
        Ok(())
    })
}

/// `kw_builder_block_size` (null axes are 1).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_block_size(
    b: *mut c_void,
    x: *const c_char,
    y: *const c_char,
    z: *const c_char,
) -> c_int {
    // SAFETY: as the header requires.
    unsafe {
        geometry(b, [x, y, z], "block size", |k, x, y, z| {
            k.block_size(x, y, z);
        })
    }
}

/// `kw_builder_grid_size`: blocks per axis (null axes are 1).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_grid_size(
    b: *mut c_void,
    x: *const c_char,
    y: *const c_char,
    z: *const c_char,
) -> c_int {
    // SAFETY: as the header requires.
    unsafe {
        geometry(b, [x, y, z], "grid size", |k, x, y, z| {
            k.grid_size(x, y, z);
        })
    }
}

/// `kw_builder_grid_divisors`: blocks = div_ceil(problem size, divisor) (null axes are 1).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_grid_divisors(
    b: *mut c_void,
    x: *const c_char,
    y: *const c_char,
    z: *const c_char,
) -> c_int {
    // SAFETY: as the header requires.
    unsafe {
        geometry(b, [x, y, z], "grid divisors", |k, x, y, z| {
            k.grid_divisors(x, y, z);
        })
    }
}

/// `kw_builder_shared_memory`: dynamic shared memory per block, in bytes.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_shared_memory(b: *mut c_void, bytes: *const c_char) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let t = unsafe { text(bytes, "shared memory") }?;
        k.shared_memory(expr(t, "shared memory")?);
        Ok(())
    })
}

/// `kw_builder_define`: `-DNAME=VALUE`, the value an expression.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_define(
    b: *mut c_void,
    name: *const c_char,
    value: *const c_char,
) -> c_int {
    with(b, |k| {
        // SAFETY (both): strings, as the header requires.
        let name = unsafe { text(name, "define name") }?;
        let t = unsafe { text(value, "define value") }?;
        k.define(name, expr(t, &format!("define `{name}`"))?);
        Ok(())
    })
}

/// `kw_builder_template_args`: CUDA template arguments, each an expression (a type name is
/// a string: `"float"` with its quotes).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_template_args(
    b: *mut c_void,
    exprs: *const *const c_char,
    count: usize,
) -> c_int {
    with(b, |k| {
        // SAFETY: `count` strings, as the header requires.
        let texts = unsafe { texts(exprs, count, "template_args") }?;
        let parsed = texts
            .iter()
            .enumerate()
            .map(|(i, t)| expr(t, &format!("template argument {i}")))
            .collect::<Result<Vec<_>, _>>()?;
        k.template_args(parsed);
        Ok(())
    })
}

/// `kw_builder_compiler_flags`: extra compiler flags (appended).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_compiler_flags(
    b: *mut c_void,
    flags: *const *const c_char,
    count: usize,
) -> c_int {
    with(b, |k| {
        // SAFETY: `count` strings, as the header requires.
        let flags = unsafe { texts(flags, count, "compiler_flags") }?;
        k.compiler_flags(flags.iter().map(|f| f.to_string()));
        Ok(())
    })
}

/// `kw_builder_tuning_key`
#[no_mangle]
pub unsafe extern "C" fn kw_builder_tuning_key(b: *mut c_void, key: *const c_char) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        k.tuning_key(unsafe { text(key, "tuning key") }?);
        Ok(())
    })
}

/// `kw_builder_arg_buffer`: the next argument is a buffer of `type` with `access`.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_arg_buffer(
    b: *mut c_void,
    name: *const c_char,
    elem_type: c_int,
    access_mode: c_int,
) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let name = unsafe { text(name, "argument name") }?;
        k.buffer_of(name, scalar_type(elem_type)?, access(access_mode)?);
        Ok(())
    })
}

/// `kw_builder_arg_scalar`: the next argument is a scalar of `type`.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_arg_scalar(
    b: *mut c_void,
    name: *const c_char,
    elem_type: c_int,
) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let name = unsafe { text(name, "argument name") }?;
        k.scalar_of(name, scalar_type(elem_type)?);
        Ok(())
    })
}

/// `kw_builder_buffer_len`: how many elements buffer argument `name` must hold.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_buffer_len(
    b: *mut c_void,
    name: *const c_char,
    len: *const c_char,
) -> c_int {
    with(b, |k| {
        // SAFETY (both): strings, as the header requires.
        let name = unsafe { text(name, "argument name") }?;
        let t = unsafe { text(len, "buffer length") }?;
        k.buffer_len(name, expr(t, &format!("buffer length of `{name}`"))?);
        Ok(())
    })
}

/// `kw_builder_arg_local`: the next kernel parameter is a `__local` argument (OpenCL) of
/// `len` elements of `elem_type`, passed by the runtime (launches leave it out).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_arg_local(
    b: *mut c_void,
    name: *const c_char,
    elem_type: c_int,
    len: *const c_char,
) -> c_int {
    with(b, |k| {
        // SAFETY (both): strings, as the header requires.
        let name = unsafe { text(name, "local argument name") }?;
        let t = unsafe { text(len, "local argument length") }?;
        let len = expr(t, &format!("length of local argument `{name}`"))?;
        k.local_of(name, scalar_type(elem_type)?, len);
        Ok(())
    })
}

/// `kw_builder_constant_symbol`: a constant-memory symbol of the source (CUDA
/// `__constant__`), `len` elements of `elem_type`, set with `kw_kernel_set_symbol`.
#[no_mangle]
pub unsafe extern "C" fn kw_builder_constant_symbol(
    b: *mut c_void,
    name: *const c_char,
    elem_type: c_int,
    len: u64,
) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let name = unsafe { text(name, "constant symbol name") }?;
        k.constant_symbol_of(name, scalar_type(elem_type)?, len);
        Ok(())
    })
}

/// `kw_builder_tolerance`: how `kw tune` compares output buffer `name` with the reference
/// (`flags`: 1 exact, 2 NaN is an error).
#[no_mangle]
pub unsafe extern "C" fn kw_builder_tolerance(
    b: *mut c_void,
    name: *const c_char,
    rtol: f64,
    atol: f64,
    flags: u32,
) -> c_int {
    with(b, |k| {
        // SAFETY: a string, as the header requires.
        let name = unsafe { text(name, "argument name") }?;
        if flags & !3 != 0 {
            return Err(CError::new(
                Status::Invalid,
                format!(
                    "tolerance of `{name}`: flags {flags:#x} hold bits other than KW_TOL_EXACT (1) \
                     and KW_TOL_NAN_IS_ERROR (2)"
                ),
            ));
        }
        k.tolerance(
            name,
            kernel_wisdom::Tolerance {
                rtol,
                atol,
                exact: flags & 1 != 0,
                nan_is_error: flags & 2 != 0,
            },
        );
        Ok(())
    })
}

/// `kw_builder_check`: builds the definition without a device and reports every problem.
#[no_mangle]
pub extern "C" fn kw_builder_check(b: *mut c_void) -> c_int {
    with(b, |k| k.build().map(drop).map_err(CError::from))
}
