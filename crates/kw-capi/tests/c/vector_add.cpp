// The C application of vector_add.c, in C++ through kernel_wisdom.hpp: its own OpenCL
// context, queue and buffers; the kernel source given as a string; a chained builder; the
// variadic launch packing buffers and scalars with their types.
//
//   vector_add_cpp KERNEL_FILE N [WISDOM_DIR]
//
// Prints "REPORT config=<configuration> wrong=<elements>"; exit status 0 when every element
// is right, 77 when there is no PoCL platform.
#include "kernel_wisdom.hpp"

extern "C" {
#include "pocl.h"
}

#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " KERNEL_FILE N [WISDOM_DIR]\n";
        return 2;
    }
    const int n = std::atoi(argv[2]);
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    std::ifstream file(argv[1]);
    std::stringstream source;
    source << file.rdbuf();
    app_cl app;
    app_cl_open(&app);
    std::vector<float> ha(n), hb(n), hc(n);
    for (int i = 0; i < n; i++) {
        ha[i] = static_cast<float>(i % 97) * 0.25f;
        hb[i] = static_cast<float>(i % 13) - 6.0f;
    }
    cl_mem a = app_buffer(&app, bytes), b = app_buffer(&app, bytes), c = app_buffer(&app, bytes);
    clEnqueueWriteBuffer(app.queue, a, CL_TRUE, 0, bytes, ha.data(), 0, nullptr, nullptr);
    clEnqueueWriteBuffer(app.queue, b, CL_TRUE, 0, bytes, hb.data(), 0, nullptr, nullptr);
    try {
        auto builder = kw::KernelBuilder::from_string("vector_add", "vector_add.cl", source.str());
        auto bx = builder.tune("block_size_x", {16, 32, 64, 128}, 64);
        auto ept = builder.tune("elems_per_thread", {1, 2, 4}, 1);
        builder.tune("strided", {0, 1}, 1);
        builder.tune("unroll", {0, 1}, 0);
        builder.restriction(bx * ept <= 256)
            .problem_size(kw::arg("n"))
            .block_size(bx)
            .grid_divisors(bx * ept)
            .output<float>("c")
            .input<float>("a")
            .input<float>("b")
            .scalar<int>("n")
            .buffer_len("b", kw::arg("n"));
        kw::Device device = kw::Device::attach_opencl(app.context, app.queue);
        kw::WisdomKernel kernel(builder, device, argc > 3 ? argv[3] : "");
        kernel.launch(app.queue, kw::buffer<float>(c), kw::buffer<float>(a),
                      kw::buffer<float>(b, n), n);
        // Again, returning the launch's event (waited for, then released).
        void* done = kernel.launch_with_event(app.queue, {}, kw::buffer<float>(c),
                                              kw::buffer<float>(a), kw::buffer<float>(b), n);
        cl_event event = static_cast<cl_event>(done);
        if (event == nullptr || clWaitForEvents(1, &event) != CL_SUCCESS) {
            std::cerr << "no launch event\n";
            return 1;
        }
        clReleaseEvent(event);
        clEnqueueReadBuffer(app.queue, c, CL_TRUE, 0, bytes, hc.data(), 0, nullptr, nullptr);
        int wrong = 0;
        for (int i = 0; i < n; i++)
            if (hc[i] != ha[i] + hb[i]) wrong++;
        // A wrong scalar type is an error naming the argument, never a crash.
        try {
            kernel.launch(app.queue, kw::buffer<float>(c), kw::buffer<float>(a),
                          kw::buffer<float>(b), 1.5);
            std::cout << "WRONG_TYPE accepted\n";
        } catch (const kw::error& e) {
            std::cout << "WRONG_TYPE " << e.what() << "\n";
        }
        // A host pointer (a T* is a CUDA device pointer) on an OpenCL device: refused, never
        // handed to the driver as a cl_mem.
        try {
            kernel.launch(app.queue, hc.data(), kw::buffer<float>(a), kw::buffer<float>(b), n);
            std::cout << "HOST_POINTER accepted\n";
        } catch (const kw::error& e) {
            std::cout << "HOST_POINTER " << e.what() << "\n";
        }
        // A number the expression language has not (an infinity, NaN): refused by name.
        try {
            kw::Expr e(1.0 / 0.0);
            std::cout << "INFINITY accepted: " << e.text() << "\n";
        } catch (const kw::error& e) {
            std::cout << "INFINITY " << e.what() << "\n";
        }
        std::cout << "device: " << device.name() << "\n";
        std::cout << "REPORT config=" << kernel.config(n) << " wrong=" << wrong << std::endl;
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseMemObject(c);
        app_cl_close(&app);
        return wrong == 0 ? 0 : 1;
    } catch (const kw::error& e) {
        std::cerr << "kernel-wisdom: " << e.what() << "\n";
        return 1;
    }
}
