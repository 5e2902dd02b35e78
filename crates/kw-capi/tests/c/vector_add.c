/* A C application with its own OpenCL context, queue and buffers that launches the tunable
 * kernels/vector_add.cl through kernel-wisdom's C API, and checks the result against a CPU
 * reference.
 *
 *   vector_add_c KERNEL_FILE N [WISDOM_DIR]
 *
 * Prints "REPORT config=<configuration> wrong=<elements>"; exit status 0 when every element
 * is right, 77 when there is no PoCL platform. Capture, wisdom and logging come from the
 * environment (KW_CAPTURE, KW_WISDOM_PATH, KW_LOG): the program has no flush call. */
#define _POSIX_C_SOURCE 199309L /* nanosleep, under -std=c99 */
#include "kernel_wisdom.h"
#include "pocl.h"

#include <time.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        int s_ = (call);                                                              \
        if (s_ != KW_OK) {                                                            \
            fprintf(stderr, "%s failed: %s: %s\n", #call, kw_status_name(s_),         \
                    kw_last_error());                                                 \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char** argv) {
    app_cl app;
    kw_builder* b = NULL;
    kw_device* dev = NULL;
    kw_kernel* k = NULL;
    static const int64_t block[] = {16, 32, 64, 128};
    static const int64_t ept[] = {1, 2, 4};
    static const int64_t flag[] = {0, 1};
    cl_mem a, bb, c;
    cl_event written[2], done = NULL;
    void* event = NULL;
    float *ha, *hb, *hc;
    kw_arg args[4];
    char config[512], name[256];
    int n, i, wrong = 0;
    size_t bytes;
    if (argc < 3) {
        fprintf(stderr, "usage: %s KERNEL_FILE N [WISDOM_DIR]\n", argv[0]);
        return 2;
    }
    n = atoi(argv[2]);
    bytes = (size_t)n * sizeof(float);
    app_cl_open(&app);

    /* The application's data. */
    ha = malloc(bytes); hb = malloc(bytes); hc = malloc(bytes);
    if (!ha || !hb || !hc) return 1;
    for (i = 0; i < n; i++) {
        ha[i] = (float)(i % 97) * 0.25f;
        hb[i] = (float)(i % 13) - 6.0f;
    }
    a = app_buffer(&app, bytes);
    bb = app_buffer(&app, bytes);
    c = app_buffer(&app, bytes);
    clEnqueueWriteBuffer(app.queue, a, CL_FALSE, 0, bytes, ha, 0, NULL, &written[0]);
    clEnqueueWriteBuffer(app.queue, bb, CL_FALSE, 0, bytes, hb, 0, NULL, &written[1]);

    /* The tunable kernel. */
    CHECK(kw_builder_new(&b, "vector_add", argv[1]));
    CHECK(kw_builder_tune_int(b, "block_size_x", block, 4, 64));
    CHECK(kw_builder_tune_int(b, "elems_per_thread", ept, 3, 1));
    CHECK(kw_builder_tune_int(b, "strided", flag, 2, 1));
    CHECK(kw_builder_tune_int(b, "unroll", flag, 2, 0));
    CHECK(kw_builder_restriction(b, "block_size_x * elems_per_thread <= 256"));
    CHECK(kw_builder_problem_size(b, "args.n", NULL, NULL));
    CHECK(kw_builder_block_size(b, "block_size_x", NULL, NULL));
    CHECK(kw_builder_grid_divisors(b, "block_size_x * elems_per_thread", NULL, NULL));
    CHECK(kw_builder_arg_buffer(b, "c", KW_F32, KW_OUTPUT));
    CHECK(kw_builder_arg_buffer(b, "a", KW_F32, KW_INPUT));
    CHECK(kw_builder_arg_buffer(b, "b", KW_F32, KW_INPUT));
    CHECK(kw_builder_arg_scalar(b, "n", KW_I32));
    CHECK(kw_builder_buffer_len(b, "a", "args.n"));
    CHECK(kw_builder_tolerance(b, "c", 1e-5, 1e-6, KW_TOL_EXACT));
    CHECK(kw_builder_check(b));

    CHECK(kw_device_attach_opencl(&dev, app.context, app.queue));
    CHECK(kw_device_name(dev, name, sizeof name));
    CHECK(kw_kernel_create(&k, b, dev, argc > 3 ? argv[3] : NULL));
    CHECK(kw_builder_free(b)); /* the kernel keeps its definition */

    /* c = a + b, after the writes, on the application's queue; sizes asked of the driver. */
    args[0] = kw_arg_buffer(c, KW_F32, KW_COUNT_AUTO);
    args[1] = kw_arg_buffer(a, KW_F32, KW_COUNT_AUTO);
    args[2] = kw_arg_buffer(bb, KW_F32, (size_t)n);
    args[3] = kw_arg_i32(n);
    CHECK(kw_kernel_launch_opencl(k, app.queue, (void* const*)written, 2, &event, args, 4));
    done = (cl_event)event;
    if (done == NULL || clWaitForEvents(1, &done) != CL_SUCCESS) {
        fprintf(stderr, "no launch event\n");
        return 1;
    }
    clReleaseEvent(done);
    /* Again, through the plain launch with the device's queue. */
    CHECK(kw_kernel_launch(k, NULL, args, 4));
    clEnqueueReadBuffer(app.queue, c, CL_TRUE, 0, bytes, hc, 0, NULL, NULL);
    for (i = 0; i < n; i++)
        if (hc[i] != ha[i] + hb[i]) wrong++;
    /* The device's own queue (NULL) waits for the events too: gated by a user event, the
       launch stays pending until the application opens the gate. */
    {
        cl_int err = CL_SUCCESS, status = CL_QUEUED;
        cl_event gate = clCreateUserEvent(app.context, &err);
        void* gates[1];
        float zero = 0.0f;
        int polls;
        struct timespec pause = {0, 10 * 1000 * 1000};
        if (err != CL_SUCCESS) {
            fprintf(stderr, "no user event\n");
            return 1;
        }
        clEnqueueFillBuffer(app.queue, c, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
        clFinish(app.queue);
        gates[0] = gate;
        CHECK(kw_kernel_launch_opencl(k, NULL, (void* const*)gates, 1, &event, args, 4));
        done = (cl_event)event;
        clFlush(app.queue);
        /* Ran before the gate opened: it would be complete within these 200 ms. */
        for (polls = 0; polls < 20 && status != CL_COMPLETE; polls++) {
            clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                           NULL);
            nanosleep(&pause, NULL);
        }
        if (status == CL_COMPLETE) {
            fprintf(stderr, "the launch on the device's queue ran before its wait event\n");
            return 1;
        }
        clSetUserEventStatus(gate, CL_COMPLETE);
        if (clWaitForEvents(1, &done) != CL_SUCCESS) {
            fprintf(stderr, "the gated launch failed\n");
            return 1;
        }
        clReleaseEvent(done);
        clReleaseEvent(gate);
        clEnqueueReadBuffer(app.queue, c, CL_TRUE, 0, bytes, hc, 0, NULL, NULL);
        for (i = 0; i < n; i++)
            if (hc[i] != ha[i] + hb[i]) wrong++;
    }
    CHECK(kw_kernel_config(k, n, 1, 1, config, sizeof config));
    printf("device: %s\n", name);
    printf("REPORT config=%s wrong=%d\n", config, wrong);

    CHECK(kw_kernel_free(k));
    CHECK(kw_device_free(dev));
    clReleaseEvent(written[0]);
    clReleaseEvent(written[1]);
    clReleaseMemObject(a);
    clReleaseMemObject(bb);
    clReleaseMemObject(c);
    app_cl_close(&app);
    free(ha); free(hb); free(hc);
    return wrong == 0 ? 0 : 1;
}
