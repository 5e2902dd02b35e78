# tools/gpu.sh sharing: the "application". From unix time T0 + 0.2 s to T0 + DURATION s it
# launches an ~80 us kernel (CuPy) and waits for it, over and over, and records each launch's
# wall time; it prints the launches more than 0.3 ms over the median with their time since T0
# (sharing_other.py marks its phases on the same clock).
# usage: python3 sharing_app.py T0 DURATION
import cupy as cp, time, sys
N = 16_000_000
a = cp.ones(N, dtype=cp.float32); b = cp.ones(N, dtype=cp.float32); c = cp.empty_like(a)
k = cp.ElementwiseKernel('float32 x, float32 y', 'float32 z', 'z = x + y', 'vadd')
k(a, b, c); cp.cuda.Device().synchronize()
t0 = float(sys.argv[1]); duration = float(sys.argv[2])
times = []
time.sleep(max(0, t0 + 0.2 - time.time()))
end = t0 + duration
while True:
    s = time.time()
    if s > end: break
    k(a, b, c); cp.cuda.runtime.deviceSynchronize()
    times.append((s - t0, time.time() - s))
ds = sorted(t for _, t in times); med = ds[len(ds)//2]
print(f"app: {len(times)} launches, median {med*1e3:.3f} ms, p99 {ds[int(len(ds)*0.99)]*1e3:.3f}, max {ds[-1]*1e3:.3f}")
slow = [(at, t) for at, t in times if t > med + 0.3e-3]
print(f"app: launches delayed > 0.3 ms: {len(slow)}")
for at, t in slow:
    print(f"  SLOW at {at:8.3f} s: {t*1e3:.3f} ms")
