//! The OpenCL demo kernels of `kernels/` (`.cl`), with their definitions.

use crate::builder::{KernelBuilder, Source};
use crate::error::Error;
use kw_core::expr::{arg, ifelse, lit};
use kw_core::kernel_def::KernelDef;

/// The source of `kernels/vector_add.cl`.
pub const VECTOR_ADD_CL: &str = include_str!("../../../../kernels/vector_add.cl");
/// The source of `kernels/stencil2d.cl`.
pub const STENCIL2D_CL: &str = include_str!("../../../../kernels/stencil2d.cl");

/// `vector_add(c, a, b, n)`: `c = a + b` over `n` floats. Parameters: `block_size_x`,
/// `elems_per_thread`, `strided`, `unroll`.
pub fn vector_add_builder() -> KernelBuilder {
    vector_add_from(Source::text("vector_add.cl", VECTOR_ADD_CL))
}

/// The `vector_add` definition over a source (OpenCL or CUDA: both have the same parameters,
/// arguments and geometry).
pub(crate) fn vector_add_from(source: Source) -> KernelBuilder {
    let mut b = KernelBuilder::new("vector_add", source);
    let bx = b.tune("block_size_x", [32, 64, 128, 256, 512, 1024], 256);
    let ept = b.tune("elems_per_thread", [1, 2, 4, 8], 1);
    b.tune("strided", [0, 1], 1);
    b.tune("unroll", [0, 1], 0);
    b.restriction(bx.clone().le(kw_core::expr::device(
        kw_core::expr::DeviceAttr::MaxThreadsPerBlock,
    )))
    .problem_size([arg("n")])
    .block_size(bx.clone(), 1, 1)
    .grid_divisors(bx * ept, 1, 1)
    .output::<f32>("c")
    .input::<f32>("a")
    .input::<f32>("b")
    .scalar::<i32>("n");
    b
}

/// The definition of [`vector_add_builder`].
pub fn vector_add() -> Result<KernelDef, Error> {
    vector_add_builder().build()
}

/// `stencil2d(out, in, width, height)`: a 5-point stencil (`0.5 * centre + 0.125 * the four
/// neighbours`, border copied). Parameters: `block_size_x`, `block_size_y`, `tile_y`,
/// `use_local` (stages a tile in dynamic local memory).
pub fn stencil2d_builder() -> KernelBuilder {
    stencil2d_from(Source::text("stencil2d.cl", STENCIL2D_CL))
}

/// The `stencil2d` definition over a source (OpenCL or CUDA).
pub(crate) fn stencil2d_from(source: Source) -> KernelBuilder {
    let mut b = KernelBuilder::new("stencil2d", source);
    let bx = b.tune("block_size_x", [8, 16, 32, 64], 16);
    let by = b.tune("block_size_y", [1, 2, 4, 8], 4);
    let ty = b.tune("tile_y", [1, 2, 4], 1);
    let local = b.tune("use_local", [0, 1], 0);
    let threads = bx.clone() * by.clone();
    b.restriction(threads.clone().ge(16))
        .restriction(threads.le(kw_core::expr::device(
            kw_core::expr::DeviceAttr::MaxThreadsPerBlock,
        )))
        .problem_size([arg("width"), arg("height")])
        .block_size(bx.clone(), by.clone(), 1)
        .grid_divisors(bx.clone(), by.clone() * ty.clone(), 1)
        .shared_memory(ifelse(local.eq_(1), (bx + 2) * (by * ty + 2) * 4, lit(0)))
        .output::<f32>("out")
        .input::<f32>("in")
        .scalar::<i32>("width")
        .scalar::<i32>("height");
    b
}

/// The definition of [`stencil2d_builder`].
pub fn stencil2d() -> Result<KernelDef, Error> {
    stencil2d_builder().build()
}

#[cfg(test)]
mod tests {
    #[test]
    fn bundled_definitions_build() {
        let v = super::vector_add().unwrap();
        assert_eq!(v.parameters.len(), 4);
        let s = super::stencil2d().unwrap();
        assert_eq!(s.problem_size.len(), 2);
    }
}
