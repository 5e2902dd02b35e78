// A 3-point weighted smoothing of a 1D signal through local memory: each work-group stages
// its span (plus one halo element each side) in `tile`, and its weights in `w_local`; the
// weights come from a `__constant` pointer argument. Two `__local` arguments stand between
// the others (not trailing). `variant` 1 is deliberately wrong (it zeroes the first output of
// every work-group's span): a tuner must report exactly those configurations as failed.
__kernel void smooth(__global float* out, __local float* tile, __global const float* in,
                     __constant float* weights, __local float* w_local, const int n) {
    const int lid = get_local_id(0);
    const int span = block_size_x * tile_size;
    const int base = get_group_id(0) * span;
    if (lid < 3) {
        w_local[lid] = weights[lid];
    }
    for (int k = lid; k < span + 2; k += block_size_x) {
        const int g = base + k - 1;
        tile[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < tile_size; t++) {
#if use_blocked
        const int k = lid * tile_size + t;
#else
        const int k = t * block_size_x + lid;
#endif
        const int g = base + k;
        if (g < n) {
            float v = w_local[0] * tile[k] + w_local[1] * tile[k + 1] + w_local[2] * tile[k + 2];
#if variant == 1
            if (k == 0) {
                v = 0.0f;
            }
#endif
            out[g] = v;
        }
    }
}
