//! On a CUDA device: after the first launch of a problem size, a launch makes no Rust heap
//! allocation on the launching thread (the driver's own allocations are not counted: they do not go through
//! Rust's allocator). Its own test binary: it installs a counting global allocator.

use kernel_wisdom::{
    demo_kernels, list_devices, open_device, BackendKind, DeviceBuffer, DeviceSelector,
    WisdomKernel,
};
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
fn cached_cuda_launches_do_not_allocate() {
    let listed = list_devices().unwrap_or_default();
    let Some(d) = listed.iter().find(|d| d.info.backend == BackendKind::Cuda) else {
        println!("SKIPPED: no CUDA driver (no CUDA device listed)");
        return;
    };
    let dev = open_device(&DeviceSelector::Index(d.index)).unwrap();
    let kernel = WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), dev.clone()).unwrap();
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
