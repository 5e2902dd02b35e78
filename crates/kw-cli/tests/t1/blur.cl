// A 5-point blur on a width x height image, each thread computing a tile of
// tile_size_x x tile_size_y outputs. `variant` 2 is a deliberately wrong variant (it adds 1
// to every output): a tuner must report exactly those configurations as failed.
__kernel void blur(__global float* out, __global const float* in, const int width,
                   const int height) {
    const int x0 = get_global_id(0) * tile_size_x;
    const int y0 = get_global_id(1) * tile_size_y;
#if loop_order == 0
    for (int ty = 0; ty < tile_size_y; ty++) {
        for (int tx = 0; tx < tile_size_x; tx++) {
#else
    for (int tx = 0; tx < tile_size_x; tx++) {
        for (int ty = 0; ty < tile_size_y; ty++) {
#endif
            const int x = x0 + tx, y = y0 + ty;
            if (x < width && y < height) {
#if use_row_pointer
                __global const float* row = in + y * width;
                float s = row[x];
                if (x > 0) s += row[x - 1];
                if (x < width - 1) s += row[x + 1];
#else
                float s = in[y * width + x];
                if (x > 0) s += in[y * width + x - 1];
                if (x < width - 1) s += in[y * width + x + 1];
#endif
                if (y > 0) s += in[(y - 1) * width + x];
                if (y < height - 1) s += in[(y + 1) * width + x];
#if variant == 2
                s += 1.0f;
#endif
#if scale_by_mul
                out[y * width + x] = s * 0.2f;
#else
                out[y * width + x] = s / 5.0f;
#endif
            }
        }
    }
}
