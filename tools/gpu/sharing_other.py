# tools/gpu.sh sharing: another process on the same GPU doing what a tuning process does
# (context creation, allocations, whole and piecewise transfers, module loads, kernels waited
# for one by one or queued back to back, device copies, frees), each phase marked with its time
# since unix time T0 and followed by a 0.5 s gap, so the application's slow launches
# (sharing_app.py) can be matched to the phase that delayed them.
# usage: python3 sharing_other.py T0
import time, sys
t0 = float(sys.argv[1]); gap = 0.5
def mark(n): print(f"  MARK {time.time()-t0:8.3f} s other: {n}", flush=True)
time.sleep(max(0, t0 + 1.0 - time.time()))
mark("import cupy + context creation")
import cupy as cp, numpy as np
cp.cuda.Device(0).use(); cp.cuda.runtime.free(cp.cuda.runtime.malloc(1)); cp.cuda.Device().synchronize()
mark("context done"); time.sleep(gap)
mark("malloc 192 MB"); x = [cp.empty(16_000_000, dtype=cp.float32) for _ in range(3)]; cp.cuda.Device().synchronize(); mark("malloc done"); time.sleep(gap)
h = np.ones(16_000_000, dtype=np.float32)
mark("H2D 64 MB whole x3"); [y.set(h) for y in x]; cp.cuda.Device().synchronize(); mark("H2D done"); time.sleep(gap)
mark("H2D 64 MB in 2 MiB pieces x3")
for y in x:
    for i in range(0, y.size, 1 << 19): y[i:i + (1 << 19)].set(h[i:i + (1 << 19)]); cp.cuda.Device().synchronize()
mark("H2D pieces done"); time.sleep(gap)
mark("D2H 64 MB whole x3"); [y.get() for y in x]; mark("D2H done"); time.sleep(gap)
mark("compile+load 10 modules (NVRTC)")
for i in range(10):
    kk = cp.RawKernel(r'extern "C" __global__ void f%d(float*a){a[threadIdx.x]+=%d;}' % (i, i), 'f%d' % i); kk((1,), (32,), (x[0],))
cp.cuda.Device().synchronize(); mark("modules done"); time.sleep(gap)
k = cp.ElementwiseKernel('float32 x, float32 y', 'float32 z', 'z = x + y', 'vadd2')
mark("30 kernels ~80us, each waited for"); 
for i in range(30): k(x[0], x[1], x[2]); cp.cuda.Device().synchronize()
mark("kernels done"); time.sleep(gap)
mark("30 kernels back to back (queued)")
for i in range(30): k(x[0], x[1], x[2])
cp.cuda.Device().synchronize(); mark("queued done"); time.sleep(gap)
mark("D2D 64 MB copies x10 queued"); [x[2].__setitem__(slice(None), x[0]) for _ in range(10)]; cp.cuda.Device().synchronize(); mark("D2D done"); time.sleep(gap)
mark("free all + mempool release"); del x; cp.get_default_memory_pool().free_all_blocks(); cp.cuda.Device().synchronize(); mark("free done"); time.sleep(gap)
mark("exit (context destroy)")
