//! The library kernels' definitions: one source per kernel (`kernels/library/`, OpenCL C that
//! also compiles as CUDA through `dialect.h`), its tuning space, geometry and arguments.

use crate::builder::{KernelBuilder, Source};
use crate::error::Error;
use kw_core::device::BackendKind;
use kw_core::expr::{
    arg, device, div_ceil, ifelse, lit, max, min, param, problem_size, DeviceAttr, Expr,
};
use kw_core::kernel_def::KernelDef;
use kw_core::tolerance::Tolerance;

/// `kernels/library/dialect.h`: the words OpenCL C and CUDA spell differently.
pub const DIALECT_H: &str = include_str!("../../../../kernels/library/dialect.h");
/// `kernels/library/transpose.cl`.
pub const TRANSPOSE: &str = include_str!("../../../../kernels/library/transpose.cl");
/// `kernels/library/reduce_sum.cl`.
pub const REDUCE_SUM: &str = include_str!("../../../../kernels/library/reduce_sum.cl");
/// `kernels/library/stencil3d.cl`.
pub const STENCIL3D: &str = include_str!("../../../../kernels/library/stencil3d.cl");
/// `kernels/library/gemm.cl`: `gemm` and its helper `copy_pad`.
pub const GEMM: &str = include_str!("../../../../kernels/library/gemm.cl");
/// `kernels/library/gemm_f16_tc.cu`: `gemm_f16` on tensor cores (CUDA only).
pub const GEMM_F16_TC: &str = include_str!("../../../../kernels/library/gemm_f16_tc.cu");
/// `kernels/library/convolution.cl`.
pub const CONVOLUTION: &str = include_str!("../../../../kernels/library/convolution.cl");

/// The wisdom shipped for library kernel `name` (`wisdom/kw_NAME.json`), embedded.
pub fn shipped_wisdom(name: &str) -> Option<&'static str> {
    match name {
        "transpose" => Some(include_str!("../../../../wisdom/kw_transpose.json")),
        "reduce_sum" => Some(include_str!("../../../../wisdom/kw_reduce_sum.json")),
        "stencil3d" => Some(include_str!("../../../../wisdom/kw_stencil3d.json")),
        "gemm" => Some(include_str!("../../../../wisdom/kw_gemm.json")),
        "gemm_f16" => Some(include_str!("../../../../wisdom/kw_gemm_f16.json")),
        "convolution" => Some(include_str!("../../../../wisdom/kw_convolution.json")),
        "hotspot" => Some(include_str!("../../../../wisdom/kw_hotspot.json")),
        "nbody" => Some(include_str!("../../../../wisdom/kw_nbody.json")),
        _ => None,
    }
}

/// `kernels/convolution/convolution.cu`: a 2D convolution reading its filter from a CUDA
/// `__constant__` array.
pub const CONVOLUTION_CU: &str = include_str!("../../../../kernels/convolution/convolution.cu");

/// The CUDA 2D convolution of `kernels/convolution/convolution.cu` on a `width` x `height`
/// image with a `filter` x `filter` filter in constant memory (`d_filter`, set with
/// `WisdomKernel::set_symbol`): `convolution_kernel(output_image, input_image)`, the input
/// `filter - 1` wider and higher than the output. `block_x` and `block_y` are the values of
/// `block_size_x` and `block_size_y` to search (their first values are the defaults).
pub fn convolution_cuda(
    width: usize,
    height: usize,
    filter: usize,
    block_x: &[i64],
    block_y: &[i64],
) -> KernelBuilder {
    let mut b = KernelBuilder::new(
        "convolution_kernel",
        Source::text("convolution.cu", CONVOLUTION_CU),
    );
    let bx = b.tune("block_size_x", block_x.to_vec(), block_x[0]);
    let by = b.tune("block_size_y", block_y.to_vec(), block_y[0]);
    let tx = b.tune("tile_size_x", [1, 2, 3, 4], 1);
    let ty = b.tune("tile_size_y", [1, 2, 3, 4], 1);
    b.tune("use_shmem", [0, 1], 1);
    b.tune("read_only", [0, 1], 0);
    b.tune("use_padding", [0, 1], 0);
    let halo = filter as i64 - 1;
    b.backend(BackendKind::Cuda)
        .restriction_text("block_size_x * block_size_y <= 1024")
        .restriction_text("use_padding == 0 or use_shmem == 1")
        .restriction_text(&format!(
            "use_shmem == 0 or (block_size_x * tile_size_x + {halo} + use_padding) * \
             (block_size_y * tile_size_y + {halo}) <= 12288"
        ))
        .define("image_width", lit(width as i64))
        .define("image_height", lit(height as i64))
        .define("filter_width", lit(filter as i64))
        .define("filter_height", lit(filter as i64))
        .tuning_key("convolution_cmem")
        .problem_size([lit(width as i64), lit(height as i64)])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx * tx, by * ty, 1)
        .output::<f32>("output_image")
        .buffer_len("output_image", lit((width * height) as i64))
        .input::<f32>("input_image")
        .buffer_len(
            "input_image",
            lit(((width + filter - 1) * (height + filter - 1)) as i64),
        )
        .constant_symbol::<f32>("d_filter", (filter * filter) as u64);
    b
}

/// The library's kernels, by name: each a routine of [`Library`](super::Library), a T1 file
/// in `kernels/library/` and a `kw bench` entry.
pub const KERNELS: &[&str] = &[
    "transpose",
    "reduce_sum",
    "stencil3d",
    "gemm",
    "gemm_f16",
    "convolution",
    "hotspot",
    "nbody",
];

/// Kernels the routines use besides their own: `copy_pad` and `copy_pad_f16` (gemm's and
/// gemm_f16's padding); `fma_peak`
/// (`kw bench`'s measured FP32 peak, the n-body's bound).
pub const HELPERS: &[&str] = &["copy_pad", "copy_pad_f16", "fma_peak"];

pub use super::hotspot::definition as hotspot;
pub use super::nbody::{definition as nbody, fma_peak};

pub(super) fn builder(name: &str, file: &str, text: &str, backend: BackendKind) -> KernelBuilder {
    let mut b = KernelBuilder::new(name, Source::text(file, text));
    b.backend(backend)
        .header("dialect.h", DIALECT_H)
        .tuning_key(format!("kw_{name}"));
    b
}

/// The definition of library kernel `name` for `backend`.
pub fn definition(name: &str, backend: BackendKind) -> Result<KernelDef, Error> {
    match name {
        "transpose" => transpose(backend).build(),
        "reduce_sum" => reduce_sum(backend).build(),
        "stencil3d" => stencil3d(backend).build(),
        "gemm" => gemm(backend).build(),
        "gemm_f16" | "copy_pad_f16" if backend != BackendKind::Cuda => Err(Error::Unsupported {
            routine: "gemm_f16",
            only: BackendKind::Cuda,
            device: backend,
        }),
        "gemm_f16" => gemm_f16(backend).build(),
        "copy_pad_f16" => copy_pad_f16(backend).build(),
        "convolution" => convolution(backend, CONVOLUTION_FILTER).build(),
        "copy_pad" => copy_pad(backend).build(),
        "hotspot" => hotspot(backend).build(),
        "nbody" => nbody(backend).build(),
        "fma_peak" => fma_peak(backend).build(),
        other => Err(Error::Shape {
            routine: "library",
            message: format!(
                "no library kernel `{other}` (kernels: {})",
                KERNELS.join(", ")
            ),
        }),
    }
}

/// `transpose(out, in, rows, cols)`: a rows x cols row-major matrix transposed into a cols x
/// rows one. Problem size (cols, rows).
pub fn transpose(backend: BackendKind) -> KernelBuilder {
    let mut b = builder("transpose", "transpose.cl", TRANSPOSE, backend);
    let tile = b.tune("tile_dim", [8, 16, 32, 64], 32);
    let rows = b.tune("block_rows", [1, 2, 4, 8, 16, 32], 8);
    b.tune("tile_pad", [0, 1], 1);
    b.tune("use_shared", [0, 1], 1);
    if backend == BackendKind::Cuda {
        // Evict-first output stores (`__stcs`); OpenCL has no such store.
        b.tune("stream_store", [0, 1], 0);
    }
    let row_tiles = div_ceil(problem_size(1), tile.clone());
    b.restriction_text("block_rows <= tile_dim")
        .restriction_text("tile_dim % block_rows == 0")
        .restriction_text("use_shared == 1 or tile_pad == 0")
        .restriction((tile.clone() * rows.clone()).le(device(DeviceAttr::MaxThreadsPerBlock)))
        .problem_size([arg("cols"), arg("rows")])
        .block_size(tile.clone(), rows, 1)
        // At most 65535 blocks along y (CUDA's limit): the row tiles beyond are folded into x
        // (see the kernel), so every configuration is valid at every size.
        .grid_size(
            div_ceil(problem_size(0), tile.clone())
                * div_ceil(row_tiles.clone(), TRANSPOSE_MAX_GRID_Y),
            min(row_tiles, TRANSPOSE_MAX_GRID_Y),
            1,
        )
        .output::<f32>("out")
        .buffer_len("out", arg("rows") * arg("cols"))
        .input::<f32>("in")
        .buffer_len("in", arg("rows") * arg("cols"))
        .scalar::<i32>("rows")
        .scalar::<i32>("cols");
    b
}

/// The most blocks along y of a [`transpose`] launch (CUDA's grid limit); the row tiles
/// beyond are folded into x.
pub const TRANSPOSE_MAX_GRID_Y: i64 = 65535;

/// `reduce_sum(out, in, n)`: `out[0] += sum(in[0..n])` (the caller zeroes `out[0]`).
/// Problem size n. Float sums in another order differ in their last bits: `out` is compared
/// with a tolerance of 1e-3 + 1e-4 x |sum|.
pub fn reduce_sum(backend: BackendKind) -> KernelBuilder {
    let mut b = builder("reduce_sum", "reduce_sum.cl", REDUCE_SUM, backend);
    let bx = b.tune("block_size_x", [32, 64, 128, 256, 512, 1024], 256);
    let ipt = b.tune("items_per_thread", [1, 2, 4, 8, 16], 4);
    let passes = b.tune("passes", [1, 2, 4, 8, 16, 32], 4);
    b.tune("strided", [0, 1], 1);
    b.restriction(bx.clone().le(device(DeviceAttr::MaxThreadsPerBlock)))
        .problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx * ipt * passes, 1, 1)
        .inout::<f32>("out")
        .buffer_len("out", 1)
        .tolerance(
            "out",
            Tolerance {
                rtol: 1e-4,
                atol: 1e-3,
                ..Tolerance::default()
            },
        )
        .input::<f32>("in")
        .buffer_len("in", arg("n"))
        .scalar::<i32>("n");
    b
}

/// `stencil3d(out, in, nx, ny, nz, c0, c1)`: the 7-point stencil on an nx x ny x nz grid
/// (x fastest), boundary cells copied. Problem size (nx, ny, nz).
pub fn stencil3d(backend: BackendKind) -> KernelBuilder {
    let mut b = builder("stencil3d", "stencil3d.cl", STENCIL3D, backend);
    let bx = b.tune("block_size_x", [16, 32, 64, 128, 256], 32);
    let by = b.tune("block_size_y", [1, 2, 4, 8, 16], 4);
    let bz = b.tune("z_per_thread", [1, 2, 4, 8, 16, 32], 8);
    let xpt = b.tune("x_per_thread", [1, 2, 4], 1);
    if backend == BackendKind::Cuda {
        // Evict-first output stores (`__stcs`); OpenCL has no such store. (A CUDA grid has at
        // most 65535 blocks along z: the selection passes over a configuration with more at
        // the launch's nz, as for every kernel: `WisdomKernel`'s validity at a launch.)
        b.tune("stream_store", [0, 1], 0);
    }
    b.restriction((bx.clone() * by.clone()).le(device(DeviceAttr::MaxThreadsPerBlock)))
        .problem_size([arg("nx"), arg("ny"), arg("nz")])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx * xpt, by, bz)
        .output::<f32>("out")
        .buffer_len("out", arg("nx") * arg("ny") * arg("nz"))
        .input::<f32>("in")
        .buffer_len("in", arg("nx") * arg("ny") * arg("nz"))
        .scalar::<i32>("nx")
        .scalar::<i32>("ny")
        .scalar::<i32>("nz")
        .scalar::<f32>("c0")
        .scalar::<f32>("c1");
    b
}

/// `gemm(c, a, b, M, N, K, alpha, beta, work, counts)`: C = alpha A B + beta C (single
/// precision), A M x K column-major, B given as its transpose (K x N, N fastest), C M x N
/// column-major; the parameters and restrictions of CLBlast's Xgemm, and `KSPLIT` (split-K,
/// see [`gemm_splits`]) with its zeroed scratch buffers `work` ([`gemm_work_len`] floats) and
/// `counts` ([`gemm_counts_len`] ints), left zeroed by every launch. Nothing checks bounds: M,
/// N and K must be multiples of MWG, NWG and KWG (restrictions over the problem size (M, N,
/// K); the routine `Library::gemm` pads to multiples of [`GEMM_PAD`]).
pub fn gemm(backend: BackendKind) -> KernelBuilder {
    let mut b = builder("gemm", "gemm.cl", GEMM, backend);
    gemm_space(&mut b, 4, &[1, 2, 4, 8, 16, GEMM_KSPLIT_MAX]);
    gemm_args::<f32>(&mut b, true);
    b.tolerance(
        "c",
        Tolerance {
            rtol: 1e-4,
            ..Tolerance::default()
        },
    );
    b
}

/// `gemm_f16(c, a, b, M, N, K, alpha, beta, work, counts)`: [`gemm`]'s arguments on IEEE half
/// matrices (the buffers hold the halves' bits, `u16`), all column-major (B too, K x N, not
/// transposed as [`gemm`]'s), computed on tensor cores
/// (`kernels/library/gemm_f16_tc.cu`, CUDA sm_80 and later: `mma.sync.m16n8k16`, f32
/// accumulators; alpha and beta f32; C rounded to half once). `work` and `counts` are unused
/// (one element each). C is compared exactly (kw compares `u16` buffers as integers): every
/// configuration adds each element's products in the same order (k ascending, 16 at a time),
/// so the bits agree. Loads and stores are bounds-checked: the tiles need not divide the
/// sizes, but M must be a multiple of 8 and K of 16 ([`GEMM_F16_PAD`]; the routine pads).
/// CUDA only ([`definition`] refuses OpenCL). Tuning key `kw_gemm_f16`.
pub fn gemm_f16(backend: BackendKind) -> KernelBuilder {
    let mut b = KernelBuilder::new("gemm_f16_tc", Source::text("gemm_f16_tc.cu", GEMM_F16_TC));
    b.backend(backend)
        .header("dialect.h", DIALECT_H)
        .tuning_key("kw_gemm_f16");
    let bm = b.tune("BLOCK_M", [32, 64, 128, 256], 128);
    let bn = b.tune("BLOCK_N", [32, 64, 128, 256], 128);
    let bk = b.tune("BLOCK_K", [16, 32, 64], 32);
    let wm = b.tune("WARPS_M", [1, 2, 4], 2);
    let wn = b.tune("WARPS_N", [1, 2, 4], 2);
    let stages = b.tune("STAGES", [2, 3, 4], 3);
    let skew = b.tune("SKEW", [0, 8], 8);
    b.tune("GROUP_M", [1, 8], 8);
    b.tune("BLOCKS_PER_SM", [1, 2], 1);
    // 0 (the kernel before the parameter, what records without it mean) or 1: the next K
    // tile's refill and first fragments overlap the products (`gemm_f16_tc.cu`).
    b.tune("PREFETCH", [0, 1], 0);
    for r in [
        "BLOCK_M % (16 * WARPS_M) == 0",
        "BLOCK_N % (16 * WARPS_N) == 0",
        // At most 128 f32 accumulators per thread (a 64 x 64 warp tile).
        "(BLOCK_M // WARPS_M) * (BLOCK_N // WARPS_N) <= 4096",
        "32 * WARPS_M * WARPS_N <= device.max_threads_per_block",
        // Two blocks per SM: at most 8 warps each (at least 64 registers a thread), and room
        // for both in shared memory.
        "BLOCKS_PER_SM == 1 or WARPS_M * WARPS_N <= 8",
        "BLOCKS_PER_SM == 1 or 4 * STAGES * (BLOCK_K * (BLOCK_M + SKEW) + BLOCK_N * (BLOCK_K + SKEW)) \
         <= device.max_shared_memory_per_block",
        // The accumulators of the blocks on one SM in at most half of its 65536 registers
        // (a 256 x 256 tile of 16 warps would spill).
        "BLOCK_M * BLOCK_N * BLOCKS_PER_SM <= 32768",
        "2 * STAGES * (BLOCK_K * (BLOCK_M + SKEW) + BLOCK_N * (BLOCK_K + SKEW)) \
         <= device.max_shared_memory_per_block",
        // cp.async, ldmatrix and mma.sync.m16n8k16 (f32 accumulators) need sm_80.
        "device.compute_capability >= 80",
        // Bounds are checked per 16 bytes of A (along M) and of B (along K), per MMA step
        // (16 products) of K, and per element of C.
        "problem_size.x % 8 == 0",
        "problem_size.z % 16 == 0",
    ] {
        b.restriction_text(r);
    }
    let [m, n] = [0, 1].map(problem_size);
    b.problem_size([arg("M"), arg("N"), arg("K")])
        .block_size(32 * wm * wn, 1, 1)
        .grid_size(div_ceil(m, bm.clone()), div_ceil(n, bn.clone()), 1)
        .shared_memory(
            2 * stages * (bk.clone() * (bm.clone() + skew.clone()) + bn.clone() * (bk + skew)),
        );
    gemm_args::<u16>(&mut b, false);
    b
}

/// The multiples `Library::gemm_f16` pads M, N and K to when the sizes are not already: what
/// [`gemm_f16`]'s bounds checks need (16 bytes of A's halves along M, one MMA step of K; any
/// N).
pub const GEMM_F16_PAD: [usize; 3] = [8, 1, 16];

/// The most K splits of [`gemm`]'s `KSPLIT` (its largest value).
pub const GEMM_KSPLIT_MAX: i64 = 32;

/// The floats of split-K partial tiles [`gemm`] may use: the number of splits is cut so that
/// splits x M x N stays within this (32 MiB), so the scratch buffer stays small whatever the
/// size, and split-K, meant for small outputs, is not used on large ones.
pub const GEMM_WORK_CAP: i64 = 1 << 23;

/// The number of K splits (grid z) of a launch of [`gemm`] at problem size (M, N, K): `KSPLIT`
/// cut to K's number of `KWG` tiles and to what [`GEMM_WORK_CAP`] allows, at least 1. Every
/// configuration is valid at every size: a `KSPLIT` the size cannot use is cut, not refused.
pub fn gemm_splits() -> Expr {
    splits_of(arg("M"), arg("N"), arg("K"))
}

/// [`gemm_splits`] for sizes `m`, `n`, `k` given as expressions.
fn splits_of(m: Expr, n: Expr, k: Expr) -> Expr {
    max(
        1,
        min(
            param("KSPLIT"),
            min(
                k.floor_div(param("KWG")),
                lit(GEMM_WORK_CAP).floor_div(m * n),
            ),
        ),
    )
}

/// The splits the size allows at most (whatever `KSPLIT`): at least 2, or 1 when split-K
/// cannot be used at this size.
fn gemm_max_splits() -> Expr {
    let mn = arg("M") * arg("N");
    min(GEMM_KSPLIT_MAX, lit(GEMM_WORK_CAP).floor_div(mn))
}

/// The length of [`gemm`]'s `work` (floats): room for the partials of the most splits the
/// size allows; 1 where split-K is not used.
pub fn gemm_work_len() -> Expr {
    let mn = arg("M") * arg("N");
    ifelse(gemm_max_splits().ge(2), mn * gemm_max_splits(), 1)
}

/// The length of [`gemm`]'s `counts` (ints): one per tile of C at the smallest tiles (16 x
/// 16); 1 where split-K is not used.
pub fn gemm_counts_len() -> Expr {
    let tiles = div_ceil(arg("M"), 16) * div_ceil(arg("N"), 16);
    ifelse(gemm_max_splits().ge(2), tiles, 1)
}

/// [`gemm_work_len`] and [`gemm_counts_len`] at (m, n) (any K), as the routine allocates them
/// for [`gemm`] (`gemm_f16` needs one element each).
pub fn gemm_scratch_lens(m: usize, n: usize) -> (usize, usize) {
    let mn = m.saturating_mul(n).max(1);
    let splits = (GEMM_WORK_CAP as usize / mn).min(GEMM_KSPLIT_MAX as usize);
    if splits >= 2 {
        (mn * splits, m.div_ceil(16) * n.div_ceil(16))
    } else {
        (1, 1)
    }
}

/// [`gemm`]'s parameters and restrictions (shared by its precisions): `elem` bytes per
/// element of A and B (the shared-memory tiles), `ksplit` the values of KSPLIT.
fn gemm_space(b: &mut KernelBuilder, elem: i64, ksplit: &[i64]) {
    b.tune("MWG", [16, 32, 64, 128], 64);
    b.tune("NWG", [16, 32, 64, 128], 64);
    b.tune("KWG", [16, 32], 16);
    let mdimc = b.tune("MDIMC", [8, 16, 32], 16);
    let ndimc = b.tune("NDIMC", [8, 16, 32], 16);
    b.tune("MDIMA", [8, 16, 32], 16);
    b.tune("NDIMB", [8, 16, 32], 16);
    b.tune("KWI", [2, 8], 2);
    b.tune("VWM", [1, 2, 4], 1);
    b.tune("VWN", [1, 2, 4], 1);
    b.tune("STRM", [0, 1], 0);
    b.tune("STRN", [0, 1], 0);
    b.tune("SA", [0, 1], 1);
    b.tune("SB", [0, 1], 1);
    b.tune("KSPLIT", ksplit.to_vec(), 1);
    for r in [
        "KWG % KWI == 0",
        "MWG % (MDIMC * VWM) == 0",
        "NWG % (NDIMC * VWN) == 0",
        "MWG % (MDIMA * VWM) == 0",
        "NWG % (NDIMB * VWN) == 0",
        "(MDIMC * NDIMC) % MDIMA == 0",
        "(MDIMC * NDIMC) % NDIMB == 0",
        "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
        "KWG % ((MDIMC * NDIMC) // NDIMB) == 0",
        "SA == 1 or MDIMA == MDIMC",
        "SB == 1 or NDIMB == NDIMC",
        "(MWG // MDIMC) * (NWG // NDIMC) <= 128",
        "MDIMC * NDIMC <= device.max_threads_per_block",
        &format!("{elem} * KWG * (SA * MWG + SB * NWG) <= device.max_shared_memory_per_block"),
        // The kernel has no bounds checks: the tiles must divide the sizes.
        "problem_size.x % MWG == 0",
        "problem_size.y % NWG == 0",
        "problem_size.z % KWG == 0",
    ] {
        b.restriction_text(r);
    }
    // The grid from the problem size (M, N, K), not the arguments: the wisdom's fill rule
    // computes it for sizes other than the launch's.
    let [m, n, k] = [0, 1, 2].map(problem_size);
    b.problem_size([arg("M"), arg("N"), arg("K")])
        .block_size(mdimc, ndimc, 1)
        .grid_size(
            div_ceil(m.clone(), param("MWG")),
            div_ceil(n.clone(), param("NWG")),
            splits_of(m, n, k),
        );
}

/// [`gemm`]'s arguments with elements of type `T` for A, B and C (alpha, beta, the partials
/// and the sums in f32 whatever `T`); `split_k`: the scratch buffers are sized for split-K
/// (else one element each: never touched).
fn gemm_args<T: kw_core::scalar::Scalar>(b: &mut KernelBuilder, split_k: bool) {
    let (work, counts) = if split_k {
        (gemm_work_len(), gemm_counts_len())
    } else {
        (lit(1), lit(1))
    };
    b.inout::<T>("c")
        .buffer_len("c", arg("M") * arg("N"))
        .input::<T>("a")
        .buffer_len("a", arg("M") * arg("K"))
        .input::<T>("b")
        .buffer_len("b", arg("K") * arg("N"))
        .scalar::<i32>("M")
        .scalar::<i32>("N")
        .scalar::<i32>("K")
        .scalar::<f32>("alpha")
        .scalar::<f32>("beta")
        // Zero before and after every launch (the kernel puts them back): compared exactly.
        .inout::<f32>("work")
        .buffer_len("work", work)
        .tolerance("work", Tolerance::exact())
        .inout::<i32>("counts")
        .buffer_len("counts", counts);
}

/// The multiples `Library::gemm` pads M, N and K to when the sizes are not already: every
/// `MWG`, `NWG` and `KWG` of [`gemm`]'s space divides them.
pub const GEMM_PAD: [usize; 3] = [128, 128, 32];

/// `copy_pad(out, in, rows_out, cols_out, rows_in, cols_in, transposed)`: a rows_in x
/// cols_in row-major matrix (with `transposed` 1, its transpose) copied into the corner of a
/// rows_out x cols_out one, zero elsewhere (or the corner cut out of a larger one), of f32.
/// Problem size (cols_out, rows_out).
pub fn copy_pad(backend: BackendKind) -> KernelBuilder {
    copy_pad_of::<f32>("copy_pad", backend)
}

/// [`copy_pad`] of IEEE halves (their bits; `PRECISION` 16), for `gemm_f16`.
pub fn copy_pad_f16(backend: BackendKind) -> KernelBuilder {
    let mut b = copy_pad_of::<u16>("copy_pad_f16", backend);
    b.define("PRECISION", lit(16));
    b
}

fn copy_pad_of<T: kw_core::scalar::Scalar>(key: &str, backend: BackendKind) -> KernelBuilder {
    let mut b = builder("copy_pad", "gemm.cl", GEMM, backend);
    b.tuning_key(format!("kw_{key}"));
    let bx = b.tune("block_size_x", [16, 32, 64, 128], 32);
    let by = b.tune("block_size_y", [1, 2, 4, 8], 8);
    b.restriction((bx.clone() * by.clone()).le(device(DeviceAttr::MaxThreadsPerBlock)))
        .problem_size([arg("cols_out"), arg("rows_out")])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx, by, 1)
        .output::<T>("out")
        .buffer_len("out", arg("rows_out") * arg("cols_out"))
        .input::<T>("in")
        .buffer_len("in", arg("rows_in") * arg("cols_in"))
        .scalar::<i32>("rows_out")
        .scalar::<i32>("cols_out")
        .scalar::<i32>("rows_in")
        .scalar::<i32>("cols_in")
        .scalar::<i32>("transposed");
    b
}

/// The largest filter width and height of [`convolution`]: its shared-memory restriction
/// leaves room for this halo, so every configuration of the space fits every filter up to it.
pub const CONVOLUTION_MAX_FILTER: usize = 17;

/// The filter (width, height) of the definition `definition("convolution", ..)` and of
/// `kernels/library/convolution_T1.json` (the published benchmark's 15 x 15).
pub const CONVOLUTION_FILTER: [usize; 2] = [15, 15];

/// `convolution(out, in, width, height)` with a `fw` x `fh` filter in constant memory (its
/// shape compile-time, the defines `FILTER_WIDTH` and `FILTER_HEIGHT`: one definition per
/// filter shape): in CUDA the `__constant__` symbol `filter` (set with
/// `WisdomKernel::set_symbol`), in OpenCL a `__constant` buffer argument `filter` after
/// `height`. `out` is width x height, `in` (width + fw - 1) x (height + fh - 1), row-major;
/// out(x, y) = sum of in(x + j, y + i) filter(i, j). The parameters of Kernel Tuner's
/// convolution benchmark (`read_only` in CUDA only). Problem size (width, height, fw x fh):
/// one tuning key for every filter, the filter's area telling records apart.
pub fn convolution(backend: BackendKind, [fw, fh]: [usize; 2]) -> KernelBuilder {
    let mut b = builder("convolution", "convolution.cl", CONVOLUTION, backend);
    let bx = b.tune(
        "block_size_x",
        (1..=16).map(|i| 16 * i).collect::<Vec<i64>>(),
        16,
    );
    let by = b.tune("block_size_y", [1, 2, 4, 8, 16], 16);
    let tx = b.tune("tile_size_x", [1, 2, 3, 4], 1);
    let ty = b.tune("tile_size_y", [1, 2, 3, 4], 1);
    if backend == BackendKind::Cuda {
        // `__ldg`; in OpenCL C `read_only` is a keyword (and there is no such load).
        b.tune("read_only", [0, 1], 0);
    }
    b.tune("use_padding", [0, 1], 0);
    b.tune("use_shmem", [0, 1], 1);
    let halo = CONVOLUTION_MAX_FILTER as i64 - 1;
    let tile = format!(
        "(block_size_x * tile_size_x + {halo} + use_padding) * (block_size_y * tile_size_y + {halo})"
    );
    b.restriction((bx.clone() * by.clone()).le(device(DeviceAttr::MaxThreadsPerBlock)))
        .restriction_text("use_padding == 0 or use_shmem == 1")
        .restriction_text("use_padding == 0 or block_size_x % 32 != 0")
        // CUDA's static shared memory (48 KiB), and the device's.
        .restriction_text(&format!("use_shmem == 0 or {tile} <= 12288"))
        .restriction_text(&format!(
            "use_shmem == 0 or 4 * {tile} <= device.max_shared_memory_per_block"
        ))
        .define("FILTER_WIDTH", lit(fw as i64))
        .define("FILTER_HEIGHT", lit(fh as i64))
        .problem_size([arg("width"), arg("height"), lit((fw * fh) as i64)])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx * tx, by * ty, lit((fw * fh) as i64))
        .output::<f32>("out")
        .buffer_len("out", arg("width") * arg("height"))
        .tolerance(
            "out",
            Tolerance {
                rtol: 1e-4,
                ..Tolerance::default()
            },
        )
        .input::<f32>("in")
        .buffer_len(
            "in",
            (arg("width") + lit(fw as i64 - 1)) * (arg("height") + lit(fh as i64 - 1)),
        )
        .scalar::<i32>("width")
        .scalar::<i32>("height");
    match backend {
        BackendKind::Cuda => {
            b.constant_symbol::<f32>("filter", (fw * fh) as u64);
        }
        _ => {
            b.input::<f32>("filter")
                .buffer_len("filter", lit((fw * fh) as i64));
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_core::eval::Scope;
    use kw_core::value::Value;

    struct Sizes([i64; 3], i64, i64);
    impl Scope for Sizes {
        fn arg(&self, arg: &kw_core::expr::ArgRef) -> Option<Value> {
            let kw_core::expr::ArgRef::Name(n) = arg else {
                return None;
            };
            let i = ["M", "N", "K"].iter().position(|x| x == n)?;
            Some(Value::Int(self.0[i]))
        }
        fn param(&self, name: &str) -> Option<Value> {
            match name {
                "KSPLIT" => Some(Value::Int(self.1)),
                "KWG" => Some(Value::Int(self.2)),
                _ => None,
            }
        }
    }

    /// The routine's scratch lengths are the definition's, and the splits fit them.
    #[test]
    fn gemm_scratch_lengths_follow_the_definition() {
        for (m, n, k) in [
            (128, 128, 32),
            (256, 256, 8192),
            (1024, 1024, 64),
            (2048, 2048, 2048),
            (4096, 4096, 4096),
            (128, 8192, 32),
        ] {
            let (work, counts) = gemm_scratch_lens(m as usize, n as usize);
            for ksplit in [1, 2, 32] {
                let s = Sizes([m, n, k], ksplit, 32);
                assert_eq!(gemm_work_len().eval_int(&s).unwrap(), work as i64);
                assert_eq!(gemm_counts_len().eval_int(&s).unwrap(), counts as i64);
                let splits = gemm_splits().eval_int(&s).unwrap();
                assert!(
                    splits >= 1 && splits <= ksplit && splits <= k / 32,
                    "{m} {n} {k}"
                );
                if splits > 1 {
                    assert!(splits * m * n <= work as i64, "{m} {n} {k}: {splits}");
                    assert!((m / 16) * (n / 16) <= counts as i64);
                }
            }
        }
        // Small outputs with a long K get every split asked for; 4096 x 4096 none.
        assert_eq!(
            gemm_splits()
                .eval_int(&Sizes([256, 256, 8192], 32, 16))
                .unwrap(),
            32
        );
        assert_eq!(
            gemm_splits()
                .eval_int(&Sizes([4096, 4096, 4096], 32, 16))
                .unwrap(),
            1
        );
    }
}
