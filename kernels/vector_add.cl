// Tunable vector add: c[i] = a[i] + b[i] for i < n.
//
// Tuning parameters (passed as defines):
//   block_size_x      work-items per work-group
//   elems_per_thread  elements each work-item adds
//   strided           0: a work-item adds consecutive elements;
//                     1: it adds elements block_size_x apart (coalesced on GPUs)
//   unroll            1: unroll the per-work-item loop fully
// The grid divisor is block_size_x * elems_per_thread: one work-group per tile.

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef elems_per_thread
#define elems_per_thread 1
#endif
#ifndef strided
#define strided 1
#endif
#ifndef unroll
#define unroll 0
#endif

__kernel void vector_add(__global float* restrict c,
                         __global const float* restrict a,
                         __global const float* restrict b,
                         const int n)
{
    const int tile = (int)get_group_id(0) * (block_size_x * elems_per_thread);
    const int lid = (int)get_local_id(0);
#if unroll
    #pragma unroll
#endif
    for (int k = 0; k < elems_per_thread; k++) {
#if strided
        const int i = tile + k * block_size_x + lid;
#else
        const int i = tile + lid * elems_per_thread + k;
#endif
        if (i < n) {
            c[i] = a[i] + b[i];
        }
    }
}
