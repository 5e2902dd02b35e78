/* The test programs' own OpenCL setup, as an application has it: the PoCL platform chosen
 * explicitly (KW_TEST_PLATFORM overrides the name), its first device, a context, an
 * in-order queue. Exit status 77 when there is no such platform (the test says SKIPPED). */
#ifndef KW_TEST_POCL_H
#define KW_TEST_POCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct app_cl {
    cl_context context;
    cl_command_queue queue;
    cl_device_id device;
} app_cl;

static int app_cl_open(app_cl* app) {
    const char* wanted = getenv("KW_TEST_PLATFORM");
    cl_platform_id platforms[16];
    cl_uint n = 0, i;
    cl_int err;
    if (!wanted) wanted = "Portable Computing Language";
    if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS || n == 0) {
        fprintf(stderr, "no OpenCL platform\n");
        exit(77);
    }
    if (n > 16) n = 16;
    for (i = 0; i < n; i++) {
        char name[256] = {0};
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
        if (strstr(name, wanted) == NULL) continue;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &app->device, NULL) != CL_SUCCESS)
            continue;
        app->context = clCreateContext(NULL, 1, &app->device, NULL, NULL, &err);
        if (err != CL_SUCCESS) { fprintf(stderr, "clCreateContext: %d\n", err); exit(1); }
        app->queue = clCreateCommandQueue(app->context, app->device, 0, &err);
        if (err != CL_SUCCESS) { fprintf(stderr, "clCreateCommandQueue: %d\n", err); exit(1); }
        return 0;
    }
    fprintf(stderr, "no OpenCL platform named like \"%s\"\n", wanted);
    exit(77);
}

static void app_cl_close(app_cl* app) {
    clReleaseCommandQueue(app->queue);
    clReleaseContext(app->context);
}

static cl_mem app_buffer(app_cl* app, size_t bytes) {
    cl_int err;
    cl_mem m = clCreateBuffer(app->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) { fprintf(stderr, "clCreateBuffer: %d\n", err); exit(1); }
    return m;
}

#endif
