//! After the first launch of a problem size, a launch makes no Rust heap allocation on the
//! launching thread (the driver's own allocations are not counted: they do not go through
//! Rust's allocator). Its own test binary: it installs a counting global allocator.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, KernelArg, ScalarType, WisdomKernel};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                COUNT.with(|c| c.set(c.get() + 1));
            }
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn cached_launches_do_not_allocate() {
    let Some(dev) = common::device() else { return };
    let kernel =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev.clone()).unwrap();
    let n = 4096;
    let a = DeviceBuffer::from_slice(dev.as_ref(), &vec![1.0f32; n]).unwrap();
    let b = DeviceBuffer::from_slice(dev.as_ref(), &vec![2.0f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
    kernel.launch(&args).unwrap(); // selects and compiles
    dev.synchronize().unwrap();

    COUNTING.with(|on| on.set(true));
    for _ in 0..100 {
        kernel.launch(&args).unwrap();
    }
    COUNTING.with(|on| on.set(false));
    let count = COUNT.with(Cell::get);
    dev.synchronize().unwrap();
    assert_eq!(count, 0, "allocations in 100 cached launches");
    assert_eq!(c.to_vec().unwrap()[n - 1], 3.0);
}

/// The same with declared buffer lengths (`buffer_len`), which every launch evaluates.
#[test]
fn cached_launches_with_declared_lengths_do_not_allocate() {
    let Some(dev) = common::device() else { return };
    let mut builder = demo_kernels::opencl::vector_add_builder();
    builder
        .buffer_len("a", kernel_wisdom::arg("n"))
        .buffer_len("b", kernel_wisdom::arg("n") + 0);
    let kernel = WisdomKernel::new(builder.build().unwrap(), dev.clone()).unwrap();
    let n = 4096;
    let a = DeviceBuffer::from_slice(dev.as_ref(), &vec![1.0f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = [c.arg(), a.arg(), a.arg(), (n as i32).into()];
    kernel.launch(&args).unwrap();
    dev.synchronize().unwrap();

    COUNT.with(|c| c.set(0));
    COUNTING.with(|on| on.set(true));
    for _ in 0..100 {
        kernel.launch(&args).unwrap();
    }
    COUNTING.with(|on| on.set(false));
    let count = COUNT.with(Cell::get);
    dev.synchronize().unwrap();
    assert_eq!(count, 0, "allocations in 100 cached launches");
    assert_eq!(c.to_vec().unwrap()[n - 1], 2.0);
}

/// Launches of shapes never seen before (buffers passed with ever other lengths, once the
/// memo of argument shapes is full) take the full path, evaluating the problem size and the
/// declared lengths every time: without allocating either.
#[test]
fn launches_of_new_shapes_do_not_allocate() {
    let Some(dev) = common::device() else { return };
    let mut builder = demo_kernels::opencl::vector_add_builder();
    builder.buffer_len("b", kernel_wisdom::arg("n") + 0);
    let kernel = WisdomKernel::new(builder.build().unwrap(), dev.clone()).unwrap();
    let n = 4096;
    let a = DeviceBuffer::from_slice(dev.as_ref(), &vec![1.0f32; n + 400]).unwrap();
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    let args = |extra: usize| {
        [
            c.arg(),
            KernelArg::device_buffer(a.memory(), ScalarType::F32, n + extra),
            a.arg(),
            (n as i32).into(),
        ]
    };
    // More shapes than the memo keeps (it stops remembering when full).
    for extra in 0..200 {
        kernel.launch(&args(extra)).unwrap();
    }
    dev.synchronize().unwrap();

    COUNT.with(|c| c.set(0));
    COUNTING.with(|on| on.set(true));
    for extra in 200..300 {
        kernel.launch(&args(extra)).unwrap();
    }
    COUNTING.with(|on| on.set(false));
    let count = COUNT.with(Cell::get);
    dev.synchronize().unwrap();
    assert_eq!(count, 0, "allocations in 100 launches of new shapes");
    assert_eq!(c.to_vec().unwrap()[n - 1], 2.0);
}
