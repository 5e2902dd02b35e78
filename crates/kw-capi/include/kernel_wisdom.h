/*
 * kernel_wisdom.h: the C API of kernel-wisdom (C99).
 *
 * GPU kernels that tune themselves: declare a tunable kernel once with a kw_builder (source,
 * tuning parameters, restrictions, launch geometry and arguments, every expression given as
 * text), bind it to a device (the application's own OpenCL context + queue or CUDA context,
 * or one kernel-wisdom opens), and launch it on the application's stream or queue with its
 * device pointers / cl_mem buffers and scalars. Each new problem size selects its
 * configuration from wisdom files and compiles it once. Set KW_CAPTURE=<kernel> to capture
 * launches for offline tuning with `kw tune` (written at exit: no flush call is needed);
 * KW_LOG=debug shows every selection. See docs/c-and-cpp.md in the source repository.
 *
 * Errors: every function returns a kw_status (KW_OK = 0). On failure kw_last_error()
 * returns the calling thread's message, valid until the next failing call on that thread.
 * Null, freed or made-up kw handles, wrong argument counts or types and expression text that
 * does not parse are errors with a message, never a crash. The driver's own handles
 * (cl_mem, cl_command_queue, cl_context, cl_event, CUdeviceptr, streams) are trusted: a
 * made-up or released one is undefined behaviour, as it is in the driver's API; NULL ones
 * are checked. Every (array, count) pair is
 * checked before anything is read: a count above KW_MAX_COUNT (2^20; e.g. SIZE_MAX, or a
 * negative number passed as size_t) or an array not aligned for its elements is KW_ERROR_INVALID, a NULL
 * array with a non-zero count KW_ERROR_NULL; a launch's argument count is compared with the
 * kernel's before any argument is read ("4 argument(s) given, the kernel takes 3").
 *
 * Threads: every function may be called from any thread; a kernel may be launched from
 * several threads at once (a new problem size is selected and compiled once). Freeing a
 * handle while another thread uses it is safe: the object lives until that call returns.
 *
 * Expressions are the project's expression language: integers, floats, strings ("float"),
 * + - * / // % ** == != < <= > >= and or not (&& || !), a if c else b, chained comparisons
 * (32 <= block_size_x * block_size_y <= 1024), min max div_ceil round_up floor ceil round
 * abs select ifelse int float bool sqrt exp log log2 log10, Python's x in [1, 2] /
 * range(...), & | ^ << >> ~, math.* (docs/expressions.md); tuning parameters by name, args.NAME / args[i] for arguments,
 * problem_size.x / problem_size[0], device.max_threads_per_block (and other attributes).
 *
 * Link with -lkernel_wisdom (pkg-config kernel_wisdom, or CMake
 * find_package(kernel_wisdom) and target kernel_wisdom::kernel_wisdom).
 */
#ifndef KERNEL_WISDOM_H
#define KERNEL_WISDOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ---------------------------------------------------------------- */

typedef enum kw_status {
    KW_OK = 0,
    KW_ERROR_NULL = 1,             /* a null handle or pointer where one is required */
    KW_ERROR_HANDLE = 2,           /* a freed, made-up or wrong-kind handle */
    KW_ERROR_INVALID = 3,          /* an invalid value (enum value, UTF-8, buffer size, ...) */
    KW_ERROR_EXPRESSION = 4,       /* expression text that does not parse */
    KW_ERROR_DEFINITION = 5,       /* an invalid kernel definition (all problems listed) */
    KW_ERROR_DEVICE = 6,           /* no such device, no driver, kernel for another backend */
    KW_ERROR_ARGUMENTS = 7,        /* wrong argument count or type for the kernel */
    KW_ERROR_BUFFER_TOO_SHORT = 8, /* a buffer shorter than the kernel's declared length */
    KW_ERROR_LAUNCH = 9,           /* compiling or launching failed */
    KW_ERROR_BACKEND = 10,         /* another driver error */
    KW_ERROR_INTERNAL = 11         /* a bug in kernel-wisdom (a caught panic) */
} kw_status;

/* The calling thread's last error message ("" if none). */
const char* kw_last_error(void);
/* "KW_OK", "KW_ERROR_NULL", ...; "KW_UNKNOWN" for other values. */
const char* kw_status_name(int status);
/* The library version, "0.1.0". */
const char* kw_version(void);
/* Waits until pending captures are written (optional: they are written at exit). */
int kw_flush_captures(void);
/* What a launch that no exact wisdom record covers does, as KW_TUNE says: "off", "record"
 * (captured once per kernel and size into KW_CAPTURE_DIR, listed at exit) or "online" (tuned
 * in the background, results in KW_TUNE_DIR). Wins over the environment; call it before the
 * first launch. docs/online-tuning.md. */
int kw_set_tune_mode(const char* mode);
/* As KW_TUNE_RANKS says: "own" or "shared" (processes sharing KW_TUNE_DIR switch to a tuned
 * configuration at the same launch). */
int kw_set_tune_ranks(const char* ranks);

/* ---- enums ------------------------------------------------------------------------ */

typedef enum kw_type {
    KW_I8 = 0, KW_I16 = 1, KW_I32 = 2, KW_I64 = 3,
    KW_U8 = 4, KW_U16 = 5, KW_U32 = 6, KW_U64 = 7,
    KW_F32 = 8, KW_F64 = 9
} kw_type;

typedef enum kw_access {
    KW_INPUT = 0,  /* read by the kernel */
    KW_OUTPUT = 1, /* written by the kernel */
    KW_INOUT = 2   /* read and written */
} kw_access;

typedef enum kw_backend {
    KW_BACKEND_AUTO = 0, /* by the source file's extension: .cu/.cuh CUDA, else OpenCL */
    KW_BACKEND_CUDA = 1,
    KW_BACKEND_OPENCL = 2
} kw_backend;

/* ---- handles (opaque; never dereference) ---------------------------------------- */

typedef struct kw_builder kw_builder;
typedef struct kw_device kw_device;
typedef struct kw_kernel kw_kernel;
typedef struct kw_library kw_library;

/* ---- kernel definition ------------------------------------------------------------
 * Every expression is parsed when given: text that does not parse returns
 * KW_ERROR_EXPRESSION naming where it was given and the column. Whole-definition checks
 * (unknown names, a default that breaks a restriction) run in kw_builder_check and
 * kw_kernel_create, which list every problem. */

/* A builder for kernel function `kernel_name` in source file `source_file` (read when the
 * kernel is created; its directory is searched for #include "..." files). */
int kw_builder_new(kw_builder** out, const char* kernel_name, const char* source_file);
/* The same with the source text in memory; `file_name` names it in messages and picks the
 * backend by its extension. */
int kw_builder_new_from_string(kw_builder** out, const char* kernel_name,
                               const char* file_name, const char* source_text);
/* Frees a builder (NULL: nothing to do). Kernels created from it are unaffected. */
int kw_builder_free(kw_builder* builder);

int kw_builder_backend(kw_builder* builder, int backend /* kw_backend */);
int kw_builder_include_dir(kw_builder* builder, const char* dir);
/* The most elements an array argument (values, strings, events) may have. */
#define KW_MAX_COUNT ((size_t)1 << 20)

/* A tuning parameter: its values (1 <= count <= KW_MAX_COUNT) and default. Every parameter is also passed
 * to the compiler as a define of its name unless kw_builder_params_as_defines(b, 0). */
int kw_builder_tune_int(kw_builder* builder, const char* name, const int64_t* values,
                        size_t count, int64_t default_value);
int kw_builder_tune_double(kw_builder* builder, const char* name, const double* values,
                           size_t count, double default_value);
int kw_builder_tune_string(kw_builder* builder, const char* name,
                           const char* const* values, size_t count,
                           const char* default_value);
int kw_builder_params_as_defines(kw_builder* builder, int on);
/* A restriction every configuration must satisfy ("block_size_x * elems <= 1024"). */
int kw_builder_restriction(kw_builder* builder, const char* expr);
/* The problem size: x required; y and z may be NULL (1-D, 2-D). An axis that is a negative
 * constant is refused by kw_builder_check / kw_kernel_create (KW_ERROR_DEFINITION). */
int kw_builder_problem_size(kw_builder* builder, const char* x, const char* y,
                            const char* z);
/* Block (work-group) size; NULL axes are 1. */
int kw_builder_block_size(kw_builder* builder, const char* x, const char* y, const char* z);
/* The grid as blocks per axis; NULL axes are 1. */
int kw_builder_grid_size(kw_builder* builder, const char* x, const char* y, const char* z);
/* The grid as divisors: blocks = div_ceil(problem size, divisor); NULL axes are 1. Without
 * a grid, the divisors are the block size. */
int kw_builder_grid_divisors(kw_builder* builder, const char* x, const char* y,
                             const char* z);
/* Dynamic shared (local) memory per block in bytes. */
int kw_builder_shared_memory(kw_builder* builder, const char* bytes);
/* -DNAME=VALUE with VALUE an expression over tuning parameters and device attributes. */
int kw_builder_define(kw_builder* builder, const char* name, const char* value);
/* CUDA template arguments, each an expression; a type is a string: "\"float\"". */
int kw_builder_template_args(kw_builder* builder, const char* const* exprs, size_t count);
int kw_builder_compiler_flags(kw_builder* builder, const char* const* flags, size_t count);
/* The name in captures and wisdom (default: the kernel name). */
int kw_builder_tuning_key(kw_builder* builder, const char* key);
/* The next kernel argument: a buffer of `type` elements the kernel reads / writes. */
int kw_builder_arg_buffer(kw_builder* builder, const char* name, int type /* kw_type */,
                          int access /* kw_access */);
/* The next kernel argument: a scalar of `type`. */
int kw_builder_arg_scalar(kw_builder* builder, const char* name, int type /* kw_type */);
/* How many elements buffer argument `name` must hold ("args.n + 2"); by default the
 * product of the problem size's axes. A shorter buffer is KW_ERROR_BUFFER_TOO_SHORT and
 * nothing is launched; capture records the whole buffer. */
int kw_builder_buffer_len(kw_builder* builder, const char* name, const char* len);
/* The next kernel parameter: an OpenCL `__local` argument of `len` elements of `type` (an
 * expression over tuning parameters, arguments and problem size: "block_size_x * 2"). The
 * runtime passes it; launches leave it out of `args`. Up to 8, at any position. */
int kw_builder_arg_local(kw_builder* builder, const char* name, int type /* kw_type */,
                         const char* len);
/* A constant-memory symbol of the source (CUDA `__constant__ T name[len];` at namespace
 * scope), set with kw_kernel_set_symbol before the first launch. */
int kw_builder_constant_symbol(kw_builder* builder, const char* name, int type /* kw_type */,
                               uint64_t len);
/* How kw tune compares output buffer `name` with the captured reference: a float element
 * matches when |got - want| <= atol + rtol * (the output's largest finite |value|); NaN
 * equals NaN. flags: KW_TOL_EXACT (compare exactly), KW_TOL_NAN_IS_ERROR. */
int kw_builder_tolerance(kw_builder* builder, const char* name, double rtol, double atol,
                         unsigned flags);
#define KW_TOL_EXACT 1u
#define KW_TOL_NAN_IS_ERROR 2u
/* Checks the whole definition without a device; every problem is in kw_last_error(). */
int kw_builder_check(kw_builder* builder);

/* ---- devices ---------------------------------------------------------------------- */

/* How many devices kernel-wisdom can open (CUDA first, then OpenCL). */
int kw_device_count(size_t* out);
/* Opens a device by selector: an index over all backends or a name substring; NULL means
 * the KW_DEVICE environment variable (device 0 when unset). The device has its own
 * context and queue / stream (the "stream" NULL in launches): on OpenCL no cl_mem the
 * application creates belongs to that context, so a program that passes its own buffers
 * attaches its context and queue instead (kw_device_attach_opencl). */
int kw_device_open(kw_device** out, const char* selector);
/* The application's OpenCL context and command queue (a cl_context and a cl_command_queue
 * created in it; retained while kernel-wisdom uses them). The queue must execute in order:
 * one created with CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE is refused (KW_ERROR_BACKEND),
 * since a routine's kernels and copies follow each other on it without events. */
int kw_device_attach_opencl(kw_device** out, void* cl_context, void* cl_command_queue);
/* The calling thread's current CUDA context (cuCtxGetCurrent). */
int kw_device_attach_cuda_current(kw_device** out);
/* The primary context of CUDA device `ordinal`: the CUDA runtime's context. */
int kw_device_attach_cuda_primary(kw_device** out, int ordinal);
/* Frees a device handle (NULL: nothing to do). Kernels on it keep it alive. */
int kw_device_free(kw_device* device);
/* The device's name, with its NUL, into buf of cap bytes (KW_ERROR_INVALID if too small). */
int kw_device_name(const kw_device* device, char* buf, size_t cap);
/* KW_BACKEND_CUDA or KW_BACKEND_OPENCL. */
int kw_device_backend(const kw_device* device, int* out);
/* Waits for the device's own queue or stream. */
int kw_device_synchronize(const kw_device* device);

/* ---- kernels ---------------------------------------------------------------------- */

/* Creates a kernel from a builder's definition on a device (the definition is checked
 * against the device; every problem is reported). `wisdom_dir` (may be NULL: ./wisdom) is
 * the application's wisdom directory, searched after KW_WISDOM_PATH. */
int kw_kernel_create(kw_kernel** out, const kw_builder* builder, const kw_device* device,
                     const char* wisdom_dir);
/* Frees a kernel (NULL: nothing to do). */
int kw_kernel_free(kw_kernel* kernel);

/* A scalar argument's value: the member named by its type. */
typedef union kw_value {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f32; double f64;
} kw_value;

#define KW_ARG_BUFFER 0u
#define KW_ARG_SCALAR 1u
/* A buffer's element count asked of the driver: the whole cl_mem (CL_MEM_SIZE), or from a
 * CUDA device pointer to the end of its allocation (cuPointerGetAttributes). The driver is
 * asked on every launch (on an H100, about 0.1 us per buffer): give element counts where
 * launches are frequent and short. */
#define KW_COUNT_AUTO ((size_t)-1)

/* One launch argument (32 bytes on 64-bit systems). Buffers: `ptr` is the cl_mem or the
 * CUDA device pointer (a CUdeviceptr cast to void*), `count` the number of elements it
 * holds or KW_COUNT_AUTO (the size the driver reports). A count larger than what the driver
 * reports the memory holds (from `ptr` to its allocation's end) is KW_ERROR_INVALID; memory
 * the driver reports no size for is taken at its count. Scalars: `value`. The helpers below
 * fill it. */
typedef struct kw_arg {
    uint32_t kind; /* KW_ARG_BUFFER or KW_ARG_SCALAR */
    uint32_t type; /* kw_type: the scalar's type or the buffer's element type */
    void* ptr;
    size_t count;
    kw_value value;
} kw_arg;

static inline kw_arg kw_arg_buffer(void* ptr, kw_type type, size_t count) {
    kw_arg a;
    a.kind = KW_ARG_BUFFER; a.type = (uint32_t)type; a.ptr = ptr; a.count = count;
    a.value.u64 = 0;
    return a;
}
static inline kw_arg kw_arg_scalar_i64(kw_type type, int64_t v) {
    kw_arg a;
    a.kind = KW_ARG_SCALAR; a.type = (uint32_t)type; a.ptr = NULL; a.count = 0;
    a.value.u64 = 0;
    switch (type) {
    case KW_I8: a.value.i8 = (int8_t)v; break;
    case KW_I16: a.value.i16 = (int16_t)v; break;
    case KW_I32: a.value.i32 = (int32_t)v; break;
    case KW_U8: a.value.u8 = (uint8_t)v; break;
    case KW_U16: a.value.u16 = (uint16_t)v; break;
    case KW_U32: a.value.u32 = (uint32_t)v; break;
    case KW_U64: a.value.u64 = (uint64_t)v; break;
    case KW_F32: a.value.f32 = (float)v; break;
    case KW_F64: a.value.f64 = (double)v; break;
    default: a.value.i64 = v; break;
    }
    return a;
}
static inline kw_arg kw_arg_i32(int32_t v) { return kw_arg_scalar_i64(KW_I32, v); }
static inline kw_arg kw_arg_i64(int64_t v) { return kw_arg_scalar_i64(KW_I64, v); }
static inline kw_arg kw_arg_u32(uint32_t v) { return kw_arg_scalar_i64(KW_U32, v); }
static inline kw_arg kw_arg_u64(uint64_t v) {
    kw_arg a = kw_arg_scalar_i64(KW_U64, 0);
    a.value.u64 = v;
    return a;
}
static inline kw_arg kw_arg_f32(float v) {
    kw_arg a = kw_arg_scalar_i64(KW_F32, 0);
    a.value.f32 = v;
    return a;
}
static inline kw_arg kw_arg_f64(double v) {
    kw_arg a = kw_arg_scalar_i64(KW_F64, 0);
    a.value.f64 = v;
    return a;
}

/* Launches with the configuration selected for the arguments' problem size, on `stream`: a
 * CUstream / cudaStream_t or a cl_command_queue of the device's context; NULL is the
 * device's own queue or stream. Asynchronous, ordered on that stream / queue. A captured
 * launch (KW_CAPTURE) waits for the launch to copy its outputs. `nargs` must be the
 * kernel's argument count (checked first: KW_ERROR_ARGUMENTS). A problem size that
 * evaluates to a negative axis is KW_ERROR_ARGUMENTS naming the kernel and the size; one
 * with an empty axis (0 elements) launches nothing and returns KW_OK (nothing is compiled
 * or captured; kw_kernel_launch_opencl then returns a NULL out_event). */
int kw_kernel_launch(const kw_kernel* kernel, void* stream, const kw_arg* args, size_t nargs);
/* OpenCL: launches on `queue` (NULL: the device's own) after `nwait` cl_events (a NULL
 * entry is KW_ERROR_NULL); with a non-NULL out_event, returns the launch's cl_event (release
 * it with clReleaseEvent); *out_event is NULL when the call fails. */
int kw_kernel_launch_opencl(const kw_kernel* kernel, void* queue, void* const* wait_events,
                            size_t nwait, void** out_event, const kw_arg* args,
                            size_t nargs);
/* Sets constant-memory symbol `name` to `count` elements of `type` at `data`: written into
 * every configuration's module (now, and at each later compile) and carried by captures.
 * Every declared symbol must be set before the first launch (else KW_ERROR_INVALID). */
int kw_kernel_set_symbol(const kw_kernel* kernel, const char* name, int type /* kw_type */,
                         const void* data, size_t count);
/* The configuration ("name=value,...") launches of problem size (x, y, z) use, once one
 * was launched (unused axes are 1). */
int kw_kernel_config(const kw_kernel* kernel, int64_t x, int64_t y, int64_t z, char* buf,
                     size_t cap);

/* ---- the library: tuned routines ------------------------------------------------
 * kernel-wisdom's library kernels (kernels/library/, docs/c-and-cpp.md), each selecting its
 * configuration per problem size from wisdom (the H100 wisdom shipped with kernel-wisdom is
 * embedded; files on the wisdom path win). Buffers are the application's, as launches take
 * them: kw_arg_buffer(ptr, KW_F32, count) with a cl_mem or CUDA device pointer of the
 * library's device and the routine's length for it (or KW_COUNT_AUTO: the driver's size,
 * which must then be that length exactly); a count larger than the driver says the memory
 * holds is KW_ERROR_INVALID, a cl_mem of another OpenCL context than the device's
 * KW_ERROR_ARGUMENTS (as at a kernel launch). An output must not share memory with another buffer of the call
 * (KW_ERROR_INVALID: "... output and input share memory"). Every routine works at every size; the work is
 * enqueued on the device's own queue or stream (the queue given to kw_device_attach_opencl;
 * kw_device_synchronize waits for it). A length that does not fit the shape is
 * KW_ERROR_INVALID naming the routine, the buffer and both lengths ("library routine
 * `transpose`: input (rows x cols) holds 12 elements, the shape needs 15"), and nothing is
 * launched; a buffer that is a scalar or of another kw_type than the routine's (KW_F32;
 * KW_U16, the bits of half floats, for kw_library_gemm_f16) is
 * KW_ERROR_ARGUMENTS (a type value that is no kw_type KW_ERROR_INVALID), a NULL one
 * KW_ERROR_NULL. */

/* The routines on `device`; `wisdom_dir` (may be NULL: ./wisdom) is searched after
 * KW_WISDOM_PATH. Kernels are compiled at their first call. */
int kw_library_create(kw_library** out, const kw_device* device, const char* wisdom_dir);
/* Frees a library (NULL: nothing to do). */
int kw_library_free(kw_library* library);
/* output (cols x rows) = the transpose of input (rows x cols, row-major). */
int kw_library_transpose(const kw_library* library, size_t rows, size_t cols, kw_arg input,
                         kw_arg output);
/* *out = the sum of input's elements (waits for the result). */
int kw_library_sum(const kw_library* library, kw_arg input, float* out);
/* output = the 7-point stencil of input on an nx x ny x nz grid (x fastest):
 * c0 * centre + c1 * (the six neighbours); boundary cells copied. */
int kw_library_stencil3d(const kw_library* library, size_t nx, size_t ny, size_t nz, float c0,
                         float c1, kw_arg input, kw_arg output);
/* c = alpha a b + beta c in single precision: a m x k, b k x n, c m x n, all column-major
 * (element (i, j) of an r-row matrix at j * r + i). beta 0 ignores c's contents, alpha 0
 * those of a and b (c = beta c, as BLAS). c must not share memory with a or b. */
int kw_library_gemm(const kw_library* library, size_t m, size_t n, size_t k, float alpha,
                    kw_arg a, kw_arg b, float beta, kw_arg c);
/* The GEMM above on IEEE half matrices: a, b and c hold the halves' bits (uint16_t,
 * KW_U16 buffers); the products are summed in float (tensor cores) and c rounded to half
 * once; alpha and beta are floats. CUDA only, sm_80 and later: KW_ERROR_DEVICE on an OpenCL
 * device, no valid configuration on an older GPU. Operands need no alignment (one not
 * 16-byte aligned is copied first). */
int kw_library_gemm_f16(const kw_library* library, size_t m, size_t n, size_t k, float alpha,
                        kw_arg a, kw_arg b, float beta, kw_arg c);
/* output (width x height, row-major) = the 2D convolution of input with the filter:
 * output(x, y) = sum over i < filter_height, j < filter_width of
 * input(x + j, y + i) * filter[i * filter_width + j] (the filter is not flipped). input is
 * padded by the filter's halo: (width + filter_width - 1) x (height + filter_height - 1).
 * The filter (host memory, filter_width x filter_height floats) goes to constant memory;
 * filter sides 1 to 17 (larger: KW_ERROR_INVALID). */
int kw_library_convolution(const kw_library* library, size_t width, size_t height,
                           size_t filter_width, size_t filter_height, const float* filter,
                           kw_arg input, kw_arg output);
/* temp_out = iterations steps of Rodinia's hotspot on an nx x ny grid (x fastest) from
 * temp_in with power (all nx x ny floats; temp_in is not written; iterations at most
 * 2^31 - 1): per step
 * t' = t + step_div_cap (p + (s + n - 2t) ry_1 + (e + w - 2t) rx_1 + (amb_temp - t) rz_1),
 * a neighbour outside the grid being the cell itself. */
int kw_library_hotspot(const kw_library* library, size_t nx, size_t ny, size_t iterations,
                       float step_div_cap, float rx_1, float ry_1, float rz_1, float amb_temp,
                       kw_arg temp_in, kw_arg power, kw_arg temp_out);
/* One all-pairs n-body step: pos and vel hold 4 floats a body (x, y, z, mass; velocity x, y,
 * z and a value kept); accelerations with softening (> 0), then v' = (v + a dt) damping,
 * x' = x + v' dt, into pos_out and vel_out (other buffers than the inputs). */
int kw_library_nbody(const kw_library* library, size_t n, float dt, float softening,
                     float damping, kw_arg pos, kw_arg vel, kw_arg pos_out, kw_arg vel_out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KERNEL_WISDOM_H */
