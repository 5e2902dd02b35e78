/* Bad input through the C API: every case must return its status with a message, and the
 * program must keep running. Prints "ok NAME" per case, "FAIL NAME: ..." for a case that
 * went wrong; exit status 0 when every case passed, 77 when there is no PoCL platform. */
#include "kernel_wisdom.h"
#include "pocl.h"

static int failures = 0;

static void expect(const char* name, int status, int want, const char* fragment) {
    const char* msg = kw_last_error();
    if (status != want || (fragment && strstr(msg, fragment) == NULL)) {
        printf("FAIL %s: status %s (wanted %s), message: %s\n", name, kw_status_name(status),
               kw_status_name(want), msg);
        failures++;
    } else {
        printf("ok %s: %s\n", name, want == KW_OK ? "" : msg);
    }
}

static const char* source =
    "__kernel void scale(__global float* x, const float s, const int n) {\n"
    "    int i = get_global_id(0); if (i < n) x[i] *= s;\n"
    "}\n";

/* The definition of `scale`, its buffer declared of type `x_type`. */
static kw_builder* scale_builder_of(int x_type) {
    static const int64_t block[] = {32, 64};
    kw_builder* b = NULL;
    kw_builder_new_from_string(&b, "scale", "scale.cl", source);
    kw_builder_tune_int(b, "block_size_x", block, 2, 32);
    kw_builder_problem_size(b, "args.n", NULL, NULL);
    kw_builder_block_size(b, "block_size_x", NULL, NULL);
    kw_builder_arg_buffer(b, "x", x_type, KW_INOUT);
    kw_builder_arg_scalar(b, "s", KW_F32);
    kw_builder_arg_scalar(b, "n", KW_I32);
    return b;
}

static kw_builder* scale_builder(void) { return scale_builder_of(KW_F32); }

int main(void) {
    app_cl app;
    kw_builder *b, *stale = NULL, *bad = NULL;
    kw_device* dev = NULL;
    kw_kernel* k = NULL;
    kw_arg args[4];
    cl_mem x;
    char small[4];
    const int n = 1000;
    static const int64_t values[] = {1, 2};
    app_cl_open(&app);
    x = app_buffer(&app, n * sizeof(float));

    /* Null handles and pointers. */
    expect("null out pointer", kw_builder_new(NULL, "k", "k.cl"), KW_ERROR_NULL, "null");
    expect("null kernel name", kw_builder_new(&bad, NULL, "k.cl"), KW_ERROR_NULL, "kernel_name");
    expect("null builder", kw_builder_tune_int(NULL, "p", values, 2, 1), KW_ERROR_NULL,
           "null kw_builder handle");
    expect("null device", kw_device_synchronize(NULL), KW_ERROR_NULL, "null kw_device");
    expect("null kernel", kw_kernel_launch(NULL, NULL, NULL, 0), KW_ERROR_NULL, "kw_kernel");
    expect("free null", kw_kernel_free(NULL), KW_OK, NULL);
    expect("null cl handles", kw_device_attach_opencl(&dev, NULL, NULL), KW_ERROR_NULL,
           "null cl_context");

    /* Stale, made-up and wrong-kind handles. */
    kw_builder_new(&stale, "k", "k.cl");
    expect("free", kw_builder_free(stale), KW_OK, NULL);
    expect("stale builder", kw_builder_restriction(stale, "1 < 2"), KW_ERROR_HANDLE, "stale");
    expect("double free", kw_builder_free(stale), KW_ERROR_HANDLE, "stale");
    expect("made-up handle", kw_builder_check((kw_builder*)(void*)(size_t)0x1000),
           KW_ERROR_HANDLE, "not a kw_builder handle");

    /* Bad expression text and bad values. */
    b = scale_builder();
    expect("bad restriction", kw_builder_restriction(b, "block_size_x <= "), KW_ERROR_EXPRESSION,
           "restriction: syntax error at column");
    expect("bad problem size", kw_builder_problem_size(b, "args.n +* 2", NULL, NULL),
           KW_ERROR_EXPRESSION, "problem size x");
    expect("gap in axes", kw_builder_problem_size(b, "args.n", NULL, "2"), KW_ERROR_INVALID,
           "earlier axis is null");
    expect("bad define", kw_builder_define(b, "N", "(("), KW_ERROR_EXPRESSION, "define `N`");
    expect("bad type", kw_builder_arg_scalar(b, "m", 42), KW_ERROR_INVALID, "not a kw_type");
    expect("bad access", kw_builder_arg_buffer(b, "y", KW_F32, 9), KW_ERROR_INVALID,
           "not a kw_access");
    expect("no values", kw_builder_tune_int(b, "p", values, 0, 1), KW_ERROR_INVALID, "no values");
    expect("null values", kw_builder_tune_int(b, "p", NULL, 2, 1), KW_ERROR_NULL, "values");
    expect("SIZE_MAX values", kw_builder_tune_int(b, "p", values, (size_t)-1, 1),
           KW_ERROR_INVALID, "values: a count of 18446744073709551615");
    expect("count above KW_MAX_COUNT", kw_builder_tune_int(b, "p", values, KW_MAX_COUNT + 1, 1),
           KW_ERROR_INVALID, "more than the 1048576");
    expect("define", kw_builder_define(b, "SCALE_TWICE", "block_size_x * 2"), KW_OK, NULL);
    expect("shared memory", kw_builder_shared_memory(b, "0"), KW_OK, NULL);
    expect("tuning key", kw_builder_tuning_key(b, "scale_test"), KW_OK, NULL);
    {
        const char* flags[] = {"-cl-mad-enable"};
        expect("compiler flags", kw_builder_compiler_flags(b, flags, 1), KW_OK, NULL);
    }
    expect("unknown tolerance flags", kw_builder_tolerance(b, "x", 1e-5, 1e-6, 0xff),
           KW_ERROR_INVALID, "flags 0xff");
    expect("builder still good", kw_builder_check(b), KW_OK, NULL);
    {
        /* A NaN among a parameter's values can never be selected: refused by the check. */
        kw_builder* nan_b = scale_builder();
        double nan_values[2];
        nan_values[0] = 1.0;
        nan_values[1] = strtod("nan", NULL);
        kw_builder_tune_double(nan_b, "factor", nan_values, 2, 1.0);
        expect("NaN value", kw_builder_check(nan_b), KW_ERROR_DEFINITION, "not a finite number");
        kw_builder_free(nan_b);
    }

    /* A definition with problems: every one is reported. */
    bad = scale_builder();
    kw_builder_restriction(bad, "unknown_param < 3");
    kw_builder_buffer_len(bad, "nothing", "args.n");
    kw_builder_tolerance(bad, "no_such_buffer", 1e-5, 1e-6, KW_TOL_NAN_IS_ERROR);
    expect("bad definition", kw_builder_check(bad), KW_ERROR_DEFINITION, "unknown_param");
    expect("bad tolerance", kw_builder_check(bad), KW_ERROR_DEFINITION, "no_such_buffer");
    expect("bad definition lists all", kw_builder_check(bad), KW_ERROR_DEFINITION, "nothing");
    kw_builder_problem_size(bad, "-4096", NULL, NULL);
    expect("negative constant problem size", kw_builder_check(bad), KW_ERROR_DEFINITION,
           "problem_size[0]: `(-4096)` is -4096");
    {
        const char* targs[] = {"\"float\"", "block_size_x"};
        expect("template args parse", kw_builder_template_args(bad, targs, 2), KW_OK, NULL);
        expect("template args on OpenCL", kw_builder_check(bad), KW_ERROR_DEFINITION,
               "OpenCL C kernels take no template arguments");
        targs[1] = "block_size_x +";
        expect("bad template arg", kw_builder_template_args(bad, targs, 2), KW_ERROR_EXPRESSION,
               "template argument 1");
    }

    /* Device selection. */
    {
        size_t count = 0;
        kw_device* opened = NULL;
        int backend = -1;
        expect("device count", kw_device_count(&count), KW_OK, NULL);
        if (count < 1) {
            printf("FAIL device count: %u\n", (unsigned)count);
            failures++;
        }
        expect("no such device", kw_device_open(&opened, "no-such-device-xyz"), KW_ERROR_DEVICE,
               "no-such-device-xyz");
        expect("index out of range", kw_device_open(&opened, "999"), KW_ERROR_DEVICE, "index 999");
        expect("open (KW_DEVICE)", kw_device_open(&opened, NULL), KW_OK, NULL);
        expect("backend", kw_device_backend(opened, &backend), KW_OK, NULL);
        if (backend != KW_BACKEND_OPENCL) {
            printf("FAIL backend: %d\n", backend);
            failures++;
        }
        expect("free opened", kw_device_free(opened), KW_OK, NULL);
    }

    /* The device and the kernel. */
    expect("attach", kw_device_attach_opencl(&dev, app.context, app.queue), KW_OK, NULL);
    expect("wrong-kind handle", kw_builder_check((kw_builder*)(void*)dev), KW_ERROR_HANDLE,
           "kw_device handle was given where a kw_builder is expected");
    expect("name buffer too small", kw_device_name(dev, small, sizeof small), KW_ERROR_INVALID,
           "are needed");
    expect("kernel from bad definition", kw_kernel_create(&k, bad, dev, NULL),
           KW_ERROR_DEFINITION, "unknown_param");
    expect("kernel", kw_kernel_create(&k, b, dev, NULL), KW_OK, NULL);
    expect("config before launch", kw_kernel_config(k, n, 1, 1, small, sizeof small),
           KW_ERROR_INVALID, "nothing was launched");

    /* Launch arguments. */
    args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
    args[1] = kw_arg_f32(2.0f);
    args[2] = kw_arg_i32(n);
    expect("too few arguments", kw_kernel_launch(k, NULL, args, 2), KW_ERROR_ARGUMENTS,
           "2 argument(s) given, the kernel takes 3");
    /* What lies past the caller's 3 arguments is never read: the count is checked first. */
    args[3] = kw_arg_buffer(NULL, KW_F32, 8);
    expect("too many arguments", kw_kernel_launch(k, NULL, args, 4), KW_ERROR_ARGUMENTS,
           "4 argument(s) given, the kernel takes 3");
    expect("SIZE_MAX arguments", kw_kernel_launch(k, NULL, args, (size_t)-1), KW_ERROR_ARGUMENTS,
           "argument(s) given, the kernel takes 3");
    expect("null argument array", kw_kernel_launch(k, NULL, NULL, 3), KW_ERROR_NULL, "args");
    args[1] = kw_arg_f64(2.0);
    expect("wrong scalar type", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_ARGUMENTS,
           "argument 1 `s`");
    args[1] = kw_arg_f32(2.0f);
    args[0] = kw_arg_buffer(x, KW_I32, KW_COUNT_AUTO);
    expect("wrong buffer type", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_ARGUMENTS,
           "argument 0 `x`");
    args[0] = kw_arg_buffer(x, KW_F32, (size_t)n / 2);
    expect("buffer too short", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_BUFFER_TOO_SHORT,
           "needs 1000");
    /* A count past the allocation's end (the kernel would write past it: PoCL crashed) is
     * refused with what the driver reports the buffer holds. */
    args[0] = kw_arg_buffer(x, KW_F32, (size_t)n * 4);
    args[2] = kw_arg_i32(n * 4);
    expect("count larger than the buffer", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_INVALID,
           "the buffer holds 1000");
    args[2] = kw_arg_i32(n);
    args[0] = kw_arg_buffer(NULL, KW_F32, (size_t)n);
    expect("null buffer", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_NULL, "argument 0");
    args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
    args[0].kind = 7;
    expect("bad argument kind", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_INVALID, "kind 7");
    args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
    args[0].type = 1000;
    expect("bad argument type", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_INVALID,
           "not a kw_type");
    args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
    args[2] = kw_arg_i32(-4096);
    expect("negative problem size", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_ARGUMENTS,
           "problem_size[0] `args.n` is -4096");
    args[2] = kw_arg_i32(0);
    expect("empty problem size", kw_kernel_launch(k, NULL, args, 3), KW_OK, NULL);
    args[2] = kw_arg_i32(n);
    {
        /* A buffer of another context: refused by name, as a library routine refuses it. */
        app_cl other;
        cl_mem foreign;
        void* no_event[2] = {NULL, NULL};
        app_cl_open(&other);
        foreign = app_buffer(&other, n * sizeof(float));
        args[0] = kw_arg_buffer(foreign, KW_F32, KW_COUNT_AUTO);
        expect("buffer of another context", kw_kernel_launch(k, NULL, args, 3),
               KW_ERROR_ARGUMENTS, "argument 0: the buffer belongs to another OpenCL context");
        args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
        expect("null wait event",
               kw_kernel_launch_opencl(k, NULL, no_event, 2, NULL, args, 3), KW_ERROR_NULL,
               "wait_events[0] is NULL");
        clReleaseMemObject(foreign);
        app_cl_close(&other);
    }
    {
        /* A definition that declares an int buffer for the kernel's float*: the arguments'
           fault, whatever the configuration. */
        kw_builder* ib = scale_builder_of(KW_I32);
        kw_kernel* ik = NULL;
        expect("int definition for float*", kw_kernel_create(&ik, ib, dev, NULL), KW_OK, NULL);
        args[0] = kw_arg_buffer(x, KW_I32, KW_COUNT_AUTO);
        expect("int buffer for float*", kw_kernel_launch(ik, NULL, args, 3), KW_ERROR_ARGUMENTS,
               "float*");
        args[0] = kw_arg_buffer(x, KW_F32, KW_COUNT_AUTO);
        kw_kernel_free(ik);
        kw_builder_free(ib);
    }
    expect("good launch", kw_kernel_launch(k, NULL, args, 3), KW_OK, NULL);
    expect("synchronize", kw_device_synchronize(dev), KW_OK, NULL);

    /* Freed handles stay errors. */
    expect("free kernel", kw_kernel_free(k), KW_OK, NULL);
    expect("stale kernel", kw_kernel_launch(k, NULL, args, 3), KW_ERROR_HANDLE, "stale kw_kernel");
    expect("free device", kw_device_free(dev), KW_OK, NULL);
    expect("stale device", kw_device_backend(dev, NULL), KW_ERROR_HANDLE, "stale kw_device");
    if (strcmp(kw_status_name(999), "KW_UNKNOWN") != 0) {
        printf("FAIL status name\n");
        failures++;
    }
    kw_builder_free(b);
    kw_builder_free(bad);
    clReleaseMemObject(x);
    app_cl_close(&app);
    printf("%d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
