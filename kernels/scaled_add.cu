// A templated, namespaced CUDA kernel: out[i] = alpha * x[i] + y[i] for i < n.
//
// Template parameters (kernel-wisdom passes them as template arguments, so NVRTC
// instantiates `kw::scaled_add<T, elems_per_thread>` through a name expression):
//   T                 the element type (float or double)
//   elems_per_thread  elements each thread computes (a tuning parameter)
// Tuning parameter block_size_x is the block size (blockDim.x); the grid divisor is
// block_size_x * elems_per_thread.

namespace kw {

template <typename T, int elems_per_thread>
__global__ void scaled_add(T* __restrict__ out,
                           const T* __restrict__ x,
                           const T* __restrict__ y,
                           const T alpha,
                           const int n)
{
    const int tile = (int)blockIdx.x * ((int)blockDim.x * elems_per_thread);
#pragma unroll
    for (int k = 0; k < elems_per_thread; k++) {
        const int i = tile + k * (int)blockDim.x + (int)threadIdx.x;
        if (i < n) {
            out[i] = alpha * x[i] + y[i];
        }
    }
}

}  // namespace kw
