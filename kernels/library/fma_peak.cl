// The device's single-precision peak, measured: each thread runs CHAINS independent chains
// of `iterations` fused multiply-adds (a = a * m + c), enough of them in flight to hide the
// FMA latency, and writes their sum (so nothing is optimised away). 2 * CHAINS * iterations
// flops per thread; `kw bench` sets the n-body's GFLOP/s against it.
//
// Parameters (defines): block_size_x (threads per block), CHAINS (independent accumulators).
#include "dialect.h"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef CHAINS
#define CHAINS 16
#endif

KW_KERNEL fma_peak(KW_GLOBAL float* KW_RESTRICT out, const int n, const int iterations,
                   const float m, const float c) {
    const int i = KW_GROUP(0) * block_size_x + KW_LID(0);
    float a[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) {
        a[k] = (float)i * 1e-9f + (float)k;
    }
    KW_UNROLL(4)
    for (int it = 0; it < iterations; it++) {
#pragma unroll
        for (int k = 0; k < CHAINS; k++) {
            a[k] = KW_FMA(a[k], m, c);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) {
        sum += a[k];
    }
    if (i < n) {
        out[i] = sum;
    }
}
