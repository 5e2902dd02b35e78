//! The CUDA demo kernels of `kernels/` (`.cu`), with their definitions.
//!
//! `vector_add` and `stencil2d` have the same tuning parameters, arguments and geometry as
//! their OpenCL twins in [`super::opencl`] (the CPU references are in [`super`]);
//! `scaled_add` is a templated, namespaced kernel whose template arguments are computed
//! from the configuration.

use crate::builder::{KernelBuilder, Source};
use crate::error::Error;
use kw_core::expr::{arg, device, lit, DeviceAttr};
use kw_core::kernel_def::KernelDef;

/// The source of `kernels/vector_add.cu`.
pub const VECTOR_ADD_CU: &str = include_str!("../../../../kernels/vector_add.cu");
/// The source of `kernels/stencil2d.cu`.
pub const STENCIL2D_CU: &str = include_str!("../../../../kernels/stencil2d.cu");
/// The source of `kernels/scaled_add.cu`.
pub const SCALED_ADD_CU: &str = include_str!("../../../../kernels/scaled_add.cu");

/// `vector_add(c, a, b, n)` in CUDA: `c = a + b` over `n` floats. Parameters:
/// `block_size_x`, `elems_per_thread`, `strided`, `unroll`.
pub fn vector_add_builder() -> KernelBuilder {
    super::opencl::vector_add_from(Source::text("vector_add.cu", VECTOR_ADD_CU))
}

/// The definition of [`vector_add_builder`].
pub fn vector_add() -> Result<KernelDef, Error> {
    vector_add_builder().build()
}

/// `stencil2d(out, in, width, height)` in CUDA: the 5-point stencil of
/// [`super::opencl::stencil2d`]. Parameters: `block_size_x`, `block_size_y`, `tile_y`,
/// `use_local` (stages a tile in dynamic shared memory).
pub fn stencil2d_builder() -> KernelBuilder {
    super::opencl::stencil2d_from(Source::text("stencil2d.cu", STENCIL2D_CU))
}

/// The definition of [`stencil2d_builder`].
pub fn stencil2d() -> Result<KernelDef, Error> {
    stencil2d_builder().build()
}

/// `kw::scaled_add<float, elems_per_thread>(out, x, y, alpha, n)`: `out = alpha * x + y`.
/// Parameters: `block_size_x`, `elems_per_thread` (a template argument).
pub fn scaled_add_builder() -> KernelBuilder {
    let mut b = KernelBuilder::new(
        "kw::scaled_add",
        Source::text("scaled_add.cu", SCALED_ADD_CU),
    );
    let bx = b.tune("block_size_x", [32, 64, 128, 256, 512, 1024], 128);
    let ept = b.tune("elems_per_thread", [1, 2, 4, 8], 2);
    b.params_as_defines(false)
        .restriction(bx.clone().le(device(DeviceAttr::MaxThreadsPerBlock)))
        .template_args([lit("float"), ept.clone()])
        .tuning_key("scaled_add")
        .problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx * ept, 1, 1)
        .output::<f32>("out")
        .input::<f32>("x")
        .input::<f32>("y")
        .scalar::<f32>("alpha")
        .scalar::<i32>("n");
    b
}

/// The definition of [`scaled_add_builder`].
pub fn scaled_add() -> Result<KernelDef, Error> {
    scaled_add_builder().build()
}

#[cfg(test)]
mod tests {
    use kw_core::device::BackendKind;

    #[test]
    fn cuda_demo_definitions_build() {
        let v = super::vector_add().unwrap();
        assert_eq!(v.backend, BackendKind::Cuda);
        assert_eq!(v.parameters.len(), 4);
        let s = super::stencil2d().unwrap();
        assert_eq!(s.problem_size.len(), 2);
        let t = super::scaled_add().unwrap();
        assert_eq!(t.template_args.len(), 2);
        assert_eq!(t.tuning_key, "scaled_add");
        let c = t.default_config();
        assert_eq!(
            t.template_args_for(&c, None).unwrap(),
            ["float".to_string(), "2".to_string()]
        );
    }
}
