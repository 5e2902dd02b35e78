// Sum of n floats into out[0] (which the caller zeroes first), in one launch: each thread
// accumulates items_per_thread elements per pass of a grid-stride loop, the block reduces its
// threads' sums in shared memory (a tree, halving each step), and one thread per block adds
// the block's sum to out[0] atomically. The grid is n / (block_size_x * items_per_thread *
// passes) blocks, rounded up: fewer blocks, each looping over more passes, add fewer atomics.
//
// Tuning parameters (defines): block_size_x (threads per block, a power of two),
// items_per_thread (elements a thread adds per pass), passes (grid-stride passes per thread,
// through the grid size), strided (1: a thread's items are block_size_x apart, coalesced;
// 0: consecutive).
#include "dialect.h"

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef items_per_thread
#define items_per_thread 4
#endif
#ifndef strided
#define strided 1
#endif

KW_KERNEL reduce_sum(KW_GLOBAL float* KW_RESTRICT out, KW_GLOBAL const float* KW_RESTRICT in,
                     const int n) {
    KW_SHARED float sums[block_size_x];
    const int lid = KW_LID(0);
    const long span = (long)block_size_x * items_per_thread;
    float acc = 0.0f;
    for (long base = (long)KW_GROUP(0) * span; base < n; base += (long)KW_NGROUPS(0) * span) {
#pragma unroll
        for (int k = 0; k < items_per_thread; k++) {
#if strided
            const long i = base + (long)k * block_size_x + lid;
#else
            const long i = base + (long)lid * items_per_thread + k;
#endif
            if (i < n) {
                acc += in[i];
            }
        }
    }
    sums[lid] = acc;
    KW_BARRIER();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sums[lid] += sums[lid + s];
        }
        KW_BARRIER();
    }
    if (lid == 0) {
        kw_atomic_add_f32(out, sums[0]);
    }
}
