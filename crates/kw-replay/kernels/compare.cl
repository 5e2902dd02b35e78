// Device-side verification (kw-replay `device_verify`): the same semantics as the host
// comparison (`verify.rs`): integers exactly; floats equal, or both NaN when nan_equal is 1,
// or neither NaN and |got - want| <= bound, where the host computed bound once per buffer
// (atol + rtol * the output's magnitude, kw_core::tolerance).
// The largest error is max |got - want| (in double) over elements where neither is NaN.
//
// Defines: KW_TYPE (0 f32, 1 f64, 2 i8, 3 u8, 4 i16, 5 u16, 6 i32, 7 u32, 8 i64, 9 u64),
// KW_WG (work-group size, a power of two).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#if KW_TYPE == 0
typedef float kw_t;
#define KW_FLOAT 1
#elif KW_TYPE == 1
typedef double kw_t;
#define KW_FLOAT 1
#elif KW_TYPE == 2
typedef char kw_t;
#elif KW_TYPE == 3
typedef uchar kw_t;
#elif KW_TYPE == 4
typedef short kw_t;
#elif KW_TYPE == 5
typedef ushort kw_t;
#elif KW_TYPE == 6
typedef int kw_t;
#elif KW_TYPE == 7
typedef uint kw_t;
#elif KW_TYPE == 8
typedef long kw_t;
#else
typedef ulong kw_t;
#endif
#ifndef KW_FLOAT
#define KW_FLOAT 0
#endif

#define KW_NONE 0xFFFFFFFFFFFFFFFFUL

// Combines the work-group's (count, first, error) triples into element 0.
void kw_combine(__local ulong* c, __local ulong* f, __local double* e, uint lid) {
    for (uint s = KW_WG / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s) {
            c[lid] += c[lid + s];
            f[lid] = min(f[lid], f[lid + s]);
            e[lid] = fmax(e[lid], e[lid + s]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// One (count, first mismatch, largest error as double bits) triple per work-group.
__kernel __attribute__((reqd_work_group_size(KW_WG, 1, 1)))
void kw_compare(__global const kw_t* got, __global const kw_t* want, ulong n, double bound,
                uint nan_equal, __global ulong* partials) {
    __local ulong c[KW_WG];
    __local ulong f[KW_WG];
    __local double e[KW_WG];
    uint lid = get_local_id(0);
    ulong stride = get_global_size(0);
    ulong count = 0;
    ulong first = KW_NONE;
    double err = 0.0;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        kw_t g = got[i];
        kw_t w = want[i];
        int bad;
#if KW_FLOAT
        double gd = (double)g;
        double wd = (double)w;
        if (isnan(gd) || isnan(wd)) {
            bad = !(nan_equal && isnan(gd) && isnan(wd));
        } else if (gd == wd) {
            bad = 0;
        } else {
            double d = fabs(gd - wd);
            bad = !(d <= bound);
            err = fmax(err, d);
        }
#else
        bad = g != w;
        if (bad) {
            err = fmax(err, fabs((double)g - (double)w));
        }
#endif
        if (bad) {
            count += 1;
            first = min(first, i);
        }
    }
    c[lid] = count;
    f[lid] = first;
    e[lid] = err;
    kw_combine(c, f, e, lid);
    if (lid == 0) {
        ulong g = get_group_id(0);
        partials[3 * g] = c[0];
        partials[3 * g + 1] = f[0];
        partials[3 * g + 2] = as_ulong(e[0]);
    }
}

// Combines `groups` partial triples into result[0..3] (one work-group).
__kernel __attribute__((reqd_work_group_size(KW_WG, 1, 1)))
void kw_compare_reduce(__global const ulong* partials, uint groups, __global ulong* result) {
    __local ulong c[KW_WG];
    __local ulong f[KW_WG];
    __local double e[KW_WG];
    uint lid = get_local_id(0);
    ulong count = 0;
    ulong first = KW_NONE;
    double err = 0.0;
    for (uint g = lid; g < groups; g += KW_WG) {
        count += partials[3 * g];
        first = min(first, partials[3 * g + 1]);
        err = fmax(err, as_double(partials[3 * g + 2]));
    }
    c[lid] = count;
    f[lid] = first;
    e[lid] = err;
    kw_combine(c, f, e, lid);
    if (lid == 0) {
        result[0] = c[0];
        result[1] = f[0];
        result[2] = as_ulong(e[0]);
    }
}
