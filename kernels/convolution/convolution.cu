// 2D convolution of an image with a filter held in constant memory (`d_filter`, set from
// the host: `KernelBuilder::constant_symbol` + `WisdomKernel::set_symbol`, or a T1 file's
// argument with `MemType: Constant`). The input has a border of filter_width - 1 columns and
// filter_height - 1 rows: output (x, y) = sum over (i, j) of input(x + j, y + i) * filter(i, j).
//
// Tuning parameters (defines): block_size_x, block_size_y; tile_size_x, tile_size_y
// (outputs per thread); use_shmem (stage the block's input tile in shared memory);
// use_padding (one extra column per shared-memory row against bank conflicts); read_only
// (loads through the read-only cache, __ldg); filter_width, filter_height.
// The image size is image_width x image_height (defines, 4096 x 4096 by default, as in
// the published convolution benchmarks).

#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#ifndef filter_width
#define filter_width 15
#endif
#ifndef filter_height
#define filter_height 15
#endif
#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 16
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_shmem
#define use_shmem 1
#endif
#ifndef use_padding
#define use_padding 0
#endif
#ifndef read_only
#define read_only 0
#endif

#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define span_x (block_size_x * tile_size_x)
#define span_y (block_size_y * tile_size_y)
#define sh_w (span_x + filter_width - 1)
#define sh_h (span_y + filter_height - 1)
#if use_padding
#define sh_pitch (sh_w + 1)
#else
#define sh_pitch sh_w
#endif

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

__constant__ float d_filter[filter_height * filter_width];

extern "C" __global__ void convolution_kernel(float* __restrict__ output,
                                              const float* __restrict__ input) {
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x0 = blockIdx.x * span_x;
    const int y0 = blockIdx.y * span_y;
#if use_shmem
    __shared__ float sh[sh_h * sh_pitch];
    for (int i = ty; i < sh_h; i += block_size_y) {
        for (int j = tx; j < sh_w; j += block_size_x) {
            const int y = y0 + i;
            const int x = x0 + j;
            sh[i * sh_pitch + j] =
                (y < input_height && x < input_width) ? LOAD(&input[y * input_width + x]) : 0.0f;
        }
    }
    __syncthreads();
#endif
#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int oy = ty + ti * block_size_y;
            const int ox = tx + tj * block_size_x;
            const int y = y0 + oy;
            const int x = x0 + ox;
            if (y < image_height && x < image_width) {
                float sum = 0.0f;
#pragma unroll
                for (int i = 0; i < filter_height; i++) {
#pragma unroll
                    for (int j = 0; j < filter_width; j++) {
#if use_shmem
                        sum += sh[(oy + i) * sh_pitch + ox + j] * d_filter[i * filter_width + j];
#else
                        sum += LOAD(&input[(y + i) * input_width + x + j]) *
                               d_filter[i * filter_width + j];
#endif
                    }
                }
                output[y * image_width + x] = sum;
            }
        }
    }
}
