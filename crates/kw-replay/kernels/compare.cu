// Device-side verification (kw-replay `device_verify`), CUDA version of compare.cl: the same
// semantics as the host comparison (`verify.rs`). The host computes the bound once per
// buffer (atol + rtol * the output's magnitude, kw_core::tolerance) and passes it; NaN equals
// NaN when nan_equal is 1. __dsub_rn keeps the difference exact as on the host.
//
// Defines: KW_TYPE (0 f32, 1 f64, 2 i8, 3 u8, 4 i16, 5 u16, 6 i32, 7 u32, 8 i64, 9 u64),
// KW_WG (block size, a power of two).

#if KW_TYPE == 0
typedef float kw_t;
#define KW_FLOAT 1
#elif KW_TYPE == 1
typedef double kw_t;
#define KW_FLOAT 1
#elif KW_TYPE == 2
typedef signed char kw_t;
#elif KW_TYPE == 3
typedef unsigned char kw_t;
#elif KW_TYPE == 4
typedef short kw_t;
#elif KW_TYPE == 5
typedef unsigned short kw_t;
#elif KW_TYPE == 6
typedef int kw_t;
#elif KW_TYPE == 7
typedef unsigned int kw_t;
#elif KW_TYPE == 8
typedef long long kw_t;
#else
typedef unsigned long long kw_t;
#endif
#ifndef KW_FLOAT
#define KW_FLOAT 0
#endif

typedef unsigned long long kw_u64;
#define KW_NONE 0xFFFFFFFFFFFFFFFFULL

__device__ __forceinline__ kw_u64 kw_min(kw_u64 a, kw_u64 b) { return a < b ? a : b; }

// Combines the block's (count, first, error) triples into element 0.
__device__ void kw_combine(kw_u64* c, kw_u64* f, double* e, unsigned lid) {
    for (unsigned s = KW_WG / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (lid < s) {
            c[lid] += c[lid + s];
            f[lid] = kw_min(f[lid], f[lid + s]);
            e[lid] = fmax(e[lid], e[lid + s]);
        }
    }
    __syncthreads();
}

// One (count, first mismatch, largest error as double bits) triple per block.
extern "C" __global__ void __launch_bounds__(KW_WG)
kw_compare(const kw_t* __restrict__ got, const kw_t* __restrict__ want, kw_u64 n, double bound,
           unsigned nan_equal, kw_u64* __restrict__ partials) {
    __shared__ kw_u64 c[KW_WG];
    __shared__ kw_u64 f[KW_WG];
    __shared__ double e[KW_WG];
    unsigned lid = threadIdx.x;
    kw_u64 stride = (kw_u64)gridDim.x * blockDim.x;
    kw_u64 count = 0;
    kw_u64 first = KW_NONE;
    double err = 0.0;
    for (kw_u64 i = (kw_u64)blockIdx.x * blockDim.x + lid; i < n; i += stride) {
        kw_t g = got[i];
        kw_t w = want[i];
        bool bad;
#if KW_FLOAT
        double gd = (double)g;
        double wd = (double)w;
        // x != x only for NaN (no fast-math here): no math header needed under NVRTC.
        if (gd != gd || wd != wd) {
            bad = !(nan_equal && gd != gd && wd != wd);
        } else if (gd == wd) {
            bad = false;
        } else {
            double d = fabs(__dsub_rn(gd, wd));
            bad = !(d <= bound);
            err = fmax(err, d);
        }
#else
        bad = g != w;
        if (bad) {
            err = fmax(err, fabs(__dsub_rn((double)g, (double)w)));
        }
#endif
        if (bad) {
            count += 1;
            first = kw_min(first, i);
        }
    }
    c[lid] = count;
    f[lid] = first;
    e[lid] = err;
    kw_combine(c, f, e, lid);
    if (lid == 0) {
        kw_u64 b = blockIdx.x;
        partials[3 * b] = c[0];
        partials[3 * b + 1] = f[0];
        partials[3 * b + 2] = (kw_u64)__double_as_longlong(e[0]);
    }
}

// Combines `groups` partial triples into result[0..3] (one block).
extern "C" __global__ void __launch_bounds__(KW_WG)
kw_compare_reduce(const kw_u64* __restrict__ partials, unsigned groups, kw_u64* __restrict__ result) {
    __shared__ kw_u64 c[KW_WG];
    __shared__ kw_u64 f[KW_WG];
    __shared__ double e[KW_WG];
    unsigned lid = threadIdx.x;
    kw_u64 count = 0;
    kw_u64 first = KW_NONE;
    double err = 0.0;
    for (unsigned g = lid; g < groups; g += KW_WG) {
        count += partials[3 * g];
        first = kw_min(first, partials[3 * g + 1]);
        err = fmax(err, __longlong_as_double((long long)partials[3 * g + 2]));
    }
    c[lid] = count;
    f[lid] = first;
    e[lid] = err;
    kw_combine(c, f, e, lid);
    if (lid == 0) {
        result[0] = c[0];
        result[1] = f[0];
        result[2] = (kw_u64)__double_as_longlong(e[0]);
    }
}
