// One kernel source for OpenCL C and CUDA (NVRTC): the few words the two dialects spell
// differently. Included by every library kernel; the backend is detected, no flag needed.
//
//   KW_KERNEL            the kernel qualifier (`__kernel void` / `extern "C" __global__ void`)
//   KW_GLOBAL            a pointer to device memory (`__global` / nothing)
//   KW_SHARED            per-block memory (`__local` / `__shared__`)
//   KW_BARRIER()         a block-wide barrier with memory fence
//   KW_LID(a), KW_GROUP(a), KW_LSIZE(a), KW_NGROUPS(a)   ids and sizes per axis (0, 1, 2)
//   KW_RESTRICT          a restrict qualifier on pointers
//   KW_INLINE            a device function
//   kw_atomic_add_f32(p, v)  *p += v atomically on a float in device memory
//   kw_atomic_inc_i32(p) *p += 1 atomically on an int in device memory; returns the old value
//   KW_GLOBAL_FENCE()    orders this thread's device-memory writes before its later ones, as
//                        seen from other blocks (`__threadfence` / `mem_fence`)
//   KW_BARRIER_GLOBAL()  a block-wide barrier that also fences device memory
//   kw_half_to_float(h), kw_float_to_half(f)  an IEEE half (its bits, an unsigned short) to
//                        float, and a float to the nearest half (ties to even): no half type
//                        and no header needed (PTX `cvt`; OpenCL's core `vload_half`)
//   KW_FMA(a, b, c)      a * b + c in one rounding (single precision)
//   KW_RSQRT(x)          1 / sqrt(x) (single precision, the fast hardware approximation; on
//                        CUDA denormal x is flushed to zero: x must be 0 or a normal float)
//   KW_UNROLL(n)         `#pragma unroll n` before a loop, n a macro or a literal (1: none)
//   KW_LAUNCH_BOUNDS(t, b)  CUDA's __launch_bounds__(t threads, b blocks per SM) after
//                        KW_KERNEL; nothing in OpenCL (b = 0: none either)
//   kw_store_stream_f32(p, v)  *p = v for a value the kernel never reads back: CUDA's
//                        evict-first store (`__stcs`), so it does not push reused input out
//                        of the L2; a plain store in OpenCL
#ifndef KW_DIALECT_H
#define KW_DIALECT_H

#define KW_PRAGMA(text) _Pragma(#text)
#define KW_UNROLL(n) KW_PRAGMA(unroll n)

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KW_CUDA 1
#define KW_KERNEL extern "C" __global__ void
#define KW_GLOBAL
#define KW_SHARED __shared__
#define KW_BARRIER() __syncthreads()
#define KW_RESTRICT __restrict__
#define KW_INLINE __device__ __forceinline__
#define KW_FMA(a, b, c) fmaf((a), (b), (c))
// rsqrtf's denormal handling costs 2 multiplies and a compare per call on sm_90 (measured:
// 17.2 instructions per n-body interaction with it); the approximation without it flushes
// denormal inputs to zero, which callers rule out (n-body: softening^2 is a normal float).
KW_INLINE float kw_rsqrt_ftz(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
#define KW_RSQRT(x) kw_rsqrt_ftz(x)
#define KW_LAUNCH_BOUNDS(t, b) __launch_bounds__((t), (b))
#define KW_AXIS(v, a) ((a) == 0 ? (v).x : (a) == 1 ? (v).y : (v).z)
#define KW_LID(a) ((int)KW_AXIS(threadIdx, a))
#define KW_GROUP(a) ((int)KW_AXIS(blockIdx, a))
#define KW_LSIZE(a) ((int)KW_AXIS(blockDim, a))
#define KW_NGROUPS(a) ((int)KW_AXIS(gridDim, a))
KW_INLINE void kw_atomic_add_f32(float* p, float v) { atomicAdd(p, v); }
KW_INLINE int kw_atomic_inc_i32(int* p) { return atomicAdd(p, 1); }
#define KW_GLOBAL_FENCE() __threadfence()
KW_INLINE float kw_half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
KW_INLINE unsigned short kw_float_to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#define KW_BARRIER_GLOBAL() __syncthreads()
KW_INLINE void kw_store_stream_f32(float* p, float v) { __stcs(p, v); }
#else
#define KW_OPENCL 1
#define KW_KERNEL __kernel void
#define KW_GLOBAL __global
#define KW_SHARED __local
#define KW_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define KW_RESTRICT restrict
#define KW_INLINE inline
#define KW_FMA(a, b, c) fma((a), (b), (c))
#define KW_RSQRT(x) rsqrt(x)
#define KW_LAUNCH_BOUNDS(t, b)
#define KW_LID(a) ((int)get_local_id(a))
#define KW_GROUP(a) ((int)get_group_id(a))
#define KW_LSIZE(a) ((int)get_local_size(a))
#define KW_NGROUPS(a) ((int)get_num_groups(a))
#define KW_GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define KW_BARRIER_GLOBAL() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
inline int kw_atomic_inc_i32(volatile __global int* p) { return atomic_inc(p); }
inline void kw_store_stream_f32(__global float* p, float v) { *p = v; }
inline float kw_half_to_float(ushort h) { return vload_half(0, (const half*)&h); }
inline ushort kw_float_to_half(float f) {
    ushort h;
    vstore_half_rte(f, 0, (half*)&h);
    return h;
}
// OpenCL 1.2 has no float atomic add: a compare-and-swap loop on the float's bits.
inline void kw_atomic_add_f32(volatile __global float* p, float v) {
    union {
        unsigned int u;
        float f;
    } seen, next;
    do {
        seen.f = *p;
        next.f = seen.f + v;
    } while (atomic_cmpxchg((volatile __global unsigned int*)p, seen.u, next.u) != seen.u);
}
#endif

#endif
