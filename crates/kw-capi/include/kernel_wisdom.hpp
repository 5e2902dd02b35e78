// kernel_wisdom.hpp: header-only C++17 wrapper of the kernel-wisdom C API.
//
//   kw::KernelBuilder builder("vector_add", "kernels/vector_add.cl");
//   auto bx = builder.tune("block_size_x", {64, 128, 256}, 128);
//   auto ept = builder.tune("elems_per_thread", {1, 2, 4}, 1);
//   builder.restriction(bx * ept <= 1024)
//       .problem_size(kw::arg("n"))
//       .block_size(bx)
//       .grid_divisors(bx * ept)
//       .output<float>("c").input<float>("a").input<float>("b").scalar<int>("n");
//   kw::WisdomKernel kernel(builder, kw::Device::attach_opencl(context, queue));
//   kernel.launch(queue, kw::buffer<float>(c), kw::buffer<float>(a), kw::buffer<float>(b), n);
//   // CUDA: kernel.launch(stream, d_c, d_a, d_b, n) with device pointers (float*).
//
// Handles are RAII (move-only); every failure throws kw::error with the status and the
// message. Arguments are packed with their types: T* (arithmetic T) is a CUDA device
// pointer whose allocation size the driver reports; kw::buffer<T>(cl_mem or pointer[, count])
// names the element type of a cl_mem (and, optionally, the element count); arithmetic values
// are scalars of their own type (an `int` is KW_I32, a `float` KW_F32: cast to the kernel's
// declared type, a wrong type is an error naming the argument).
#ifndef KERNEL_WISDOM_HPP
#define KERNEL_WISDOM_HPP

#include "kernel_wisdom.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kw {

// ---- errors -------------------------------------------------------------------------

class error : public std::runtime_error {
public:
    error(int status, const std::string& message)
        : std::runtime_error(std::string(kw_status_name(status)) + ": " + message),
          status_(status) {}
    int status() const noexcept { return status_; }

private:
    int status_;
};

namespace detail {
inline void check(int status) {
    if (status != KW_OK) throw error(status, kw_last_error());
}
inline const char* c_str_or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }
}  // namespace detail

// ---- KW_TUNE ------------------------------------------------------------------------

// "off", "record" or "online" (KW_TUNE's spelling); wins over the environment.
inline void set_tune_mode(const std::string& mode) { detail::check(kw_set_tune_mode(mode.c_str())); }
// "own" or "shared" (KW_TUNE_RANKS's spelling).
inline void set_tune_ranks(const std::string& ranks) { detail::check(kw_set_tune_ranks(ranks.c_str())); }

// ---- types --------------------------------------------------------------------------

// The kw_type of an arithmetic C++ type (by size and signedness; bool has none).
template <typename T>
constexpr kw_type type_of() {
    using U = std::remove_cv_t<T>;
    static_assert(std::is_arithmetic_v<U> && !std::is_same_v<U, bool>,
                  "kernel-wisdom arguments are integers, floats or doubles");
    if constexpr (std::is_floating_point_v<U>) {
        static_assert(sizeof(U) == 4 || sizeof(U) == 8, "float or double");
        return sizeof(U) == 4 ? KW_F32 : KW_F64;
    } else if constexpr (std::is_signed_v<U>) {
        return sizeof(U) == 1 ? KW_I8 : sizeof(U) == 2 ? KW_I16 : sizeof(U) == 4 ? KW_I32 : KW_I64;
    } else {
        return sizeof(U) == 1 ? KW_U8 : sizeof(U) == 2 ? KW_U16 : sizeof(U) == 4 ? KW_U32 : KW_U64;
    }
}

// The C name of a type, as a template argument expression ("\"float\"").
template <typename T>
std::string type_name() {
    constexpr kw_type t = type_of<T>();
    const char* names[] = {"signed char", "short", "int", "long long", "unsigned char",
                           "unsigned short", "unsigned int", "unsigned long long", "float",
                           "double"};
    return std::string("\"") + names[t] + "\"";
}

// ---- expressions (text in the project's expression language) ----------------------

class Expr {
public:
    Expr(const char* text) : text_(text ? text : "") {
        if (!text) throw error(KW_ERROR_NULL, "a null expression text");
    }
    Expr(std::string text) : text_(std::move(text)) {}
    template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
    Expr(T v) : text_(std::to_string(v)) {}
    Expr(bool v) : text_(v ? "True" : "False") {}
    Expr(double v) {
        // The expression language has numbers, not infinities or NaN (their text, "inf" and
        // "nan", would read as parameter names).
        if (!std::isfinite(v)) {
            throw error(KW_ERROR_INVALID,
                        std::string("kw::Expr: ") + (std::isnan(v) ? "NaN" : "an infinity") +
                            " is not a number of the expression language");
        }
        std::ostringstream s;
        s.precision(17);
        s << v;
        text_ = s.str();
        if (text_.find_first_of(".eEn") == std::string::npos) text_ += ".0";
    }
    const std::string& text() const noexcept { return text_; }
    const char* c_str() const noexcept { return text_.c_str(); }

private:
    std::string text_;
};

namespace detail {
inline Expr binary(const Expr& a, const char* op, const Expr& b) {
    return Expr("(" + a.text() + ") " + op + " (" + b.text() + ")");
}
inline Expr call(const char* f, const Expr& a, const Expr& b) {
    return Expr(std::string(f) + "(" + a.text() + ", " + b.text() + ")");
}
}  // namespace detail

inline Expr operator+(const Expr& a, const Expr& b) { return detail::binary(a, "+", b); }
inline Expr operator-(const Expr& a, const Expr& b) { return detail::binary(a, "-", b); }
inline Expr operator*(const Expr& a, const Expr& b) { return detail::binary(a, "*", b); }
inline Expr operator/(const Expr& a, const Expr& b) { return detail::binary(a, "/", b); }
inline Expr operator%(const Expr& a, const Expr& b) { return detail::binary(a, "%", b); }
inline Expr operator==(const Expr& a, const Expr& b) { return detail::binary(a, "==", b); }
inline Expr operator!=(const Expr& a, const Expr& b) { return detail::binary(a, "!=", b); }
inline Expr operator<(const Expr& a, const Expr& b) { return detail::binary(a, "<", b); }
inline Expr operator<=(const Expr& a, const Expr& b) { return detail::binary(a, "<=", b); }
inline Expr operator>(const Expr& a, const Expr& b) { return detail::binary(a, ">", b); }
inline Expr operator>=(const Expr& a, const Expr& b) { return detail::binary(a, ">=", b); }
inline Expr operator&&(const Expr& a, const Expr& b) { return detail::binary(a, "and", b); }
inline Expr operator||(const Expr& a, const Expr& b) { return detail::binary(a, "or", b); }
inline Expr int_div(const Expr& a, const Expr& b) { return detail::binary(a, "//", b); }
inline Expr div_ceil(const Expr& a, const Expr& b) { return detail::call("div_ceil", a, b); }
inline Expr round_up(const Expr& a, const Expr& b) { return detail::call("round_up", a, b); }
inline Expr min(const Expr& a, const Expr& b) { return detail::call("min", a, b); }
inline Expr max(const Expr& a, const Expr& b) { return detail::call("max", a, b); }
// A kernel argument by name (args.n) or position (args[0]).
inline Expr arg(const std::string& name) { return Expr("args." + name); }
inline Expr arg(int index) { return Expr("args[" + std::to_string(index) + "]"); }
// A problem-size axis (0, 1, 2).
inline Expr problem_size(int axis) { return Expr("problem_size[" + std::to_string(axis) + "]"); }
// A device attribute (device.max_threads_per_block, ...).
inline Expr device_attr(const std::string& name) { return Expr("device." + name); }

// ---- launch arguments ---------------------------------------------------------------

// A buffer with its element type: a cl_mem or a CUDA device pointer, with its element
// count or KW_COUNT_AUTO (asked of the driver on every launch, as for a plain pointer
// argument: kw::buffer<float>(d_a, n) is the cheaper launch).
template <typename T>
struct Buffer {
    using element_type = T;
    void* ptr;
    size_t count;
};
template <typename T>
Buffer<T> buffer(const void* mem, size_t count = KW_COUNT_AUTO) {
    return Buffer<T>{const_cast<void*>(mem), count};
}

namespace detail {
template <typename T>
struct is_buffer : std::false_type {};
template <typename T>
struct is_buffer<Buffer<T>> : std::true_type {};
template <typename T>
inline constexpr bool dependent_false = false;

template <typename A>
kw_arg pack(const A& a) {
    using D = std::decay_t<A>;
    if constexpr (std::is_same_v<D, kw_arg>) {
        return a;
    } else if constexpr (is_buffer<D>::value) {
        return kw_arg_buffer(a.ptr, type_of<typename D::element_type>(), a.count);
    } else if constexpr (std::is_pointer_v<D>) {
        using E = std::remove_cv_t<std::remove_pointer_t<D>>;
        static_assert(std::is_arithmetic_v<E> && !std::is_same_v<E, bool>,
                      "a pointer argument must point at integers, floats or doubles; wrap "
                      "other handles (cl_mem) in kw::buffer<T>(...)");
        return kw_arg_buffer(const_cast<E*>(a), type_of<E>(), KW_COUNT_AUTO);
    } else if constexpr (std::is_arithmetic_v<D>) {
        kw_arg r = kw_arg_scalar_i64(type_of<D>(), 0);
        if constexpr (std::is_floating_point_v<D>) {
            if constexpr (sizeof(D) == 4) r.value.f32 = a; else r.value.f64 = a;
        } else if constexpr (std::is_signed_v<D>) {
            r = kw_arg_scalar_i64(type_of<D>(), static_cast<int64_t>(a));
        } else {
            r = kw_arg_scalar_i64(type_of<D>(), 0);
            r.value.u64 = 0;
            if constexpr (sizeof(D) == 1) r.value.u8 = a;
            else if constexpr (sizeof(D) == 2) r.value.u16 = a;
            else if constexpr (sizeof(D) == 4) r.value.u32 = a;
            else r.value.u64 = a;
        }
        return r;
    } else {
        static_assert(dependent_false<D>, "unsupported kernel-wisdom launch argument type");
    }
}
// `pack` on a device of `backend`: a T* is a CUDA device pointer, so on an OpenCL device it
// can only be a mistake (a host pointer, which the driver would take for a cl_mem and crash
// on), refused here.
template <typename A>
kw_arg pack_on(int backend, const A& a) {
    if constexpr (std::is_pointer_v<std::decay_t<A>>) {
        if (backend == KW_BACKEND_OPENCL) {
            throw error(KW_ERROR_ARGUMENTS,
                        "a T* argument is taken as a CUDA device pointer, but the device is an "
                        "OpenCL device: pass the cl_mem as kw::buffer<T>(mem[, count])");
        }
    }
    return pack(a);
}
}  // namespace detail

// ---- handles ------------------------------------------------------------------------

namespace detail {
template <typename H, int (*Free)(H*)>
class Handle {
public:
    Handle() = default;
    explicit Handle(H* h) : h_(h) {}
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    ~Handle() { reset(); }
    H* get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != nullptr; }
    void reset() noexcept {
        if (h_) (void)Free(h_);
        h_ = nullptr;
    }

private:
    H* h_ = nullptr;
};
}  // namespace detail

// A tunable kernel's definition, built in the style of Kernel Launcher's KernelBuilder.
class KernelBuilder {
public:
    // Kernel `kernel_name` in source file `source_file`.
    KernelBuilder(const std::string& kernel_name, const std::string& source_file) {
        kw_builder* b = nullptr;
        detail::check(kw_builder_new(&b, kernel_name.c_str(), source_file.c_str()));
        h_ = Handle(b);
    }
    // Kernel `kernel_name` in source text `text` (`file_name` picks the backend: .cu, .cl).
    static KernelBuilder from_string(const std::string& kernel_name,
                                     const std::string& file_name, const std::string& text) {
        kw_builder* b = nullptr;
        detail::check(kw_builder_new_from_string(&b, kernel_name.c_str(), file_name.c_str(),
                                                 text.c_str()));
        return KernelBuilder(Handle(b));
    }

    Expr tune(const std::string& name, std::initializer_list<int> values,
              long long default_value) {
        std::vector<int64_t> v(values.begin(), values.end());
        detail::check(kw_builder_tune_int(h_.get(), name.c_str(), v.data(), v.size(),
                                          static_cast<int64_t>(default_value)));
        return Expr(name);
    }
    Expr tune(const std::string& name, const std::vector<int64_t>& values, int64_t default_value) {
        detail::check(kw_builder_tune_int(h_.get(), name.c_str(), values.data(), values.size(),
                                          default_value));
        return Expr(name);
    }
    Expr tune(const std::string& name, std::initializer_list<double> values, double default_value) {
        std::vector<double> v(values.begin(), values.end());
        detail::check(
            kw_builder_tune_double(h_.get(), name.c_str(), v.data(), v.size(), default_value));
        return Expr(name);
    }
    Expr tune(const std::string& name, const std::vector<std::string>& values,
              const std::string& default_value) {
        std::vector<const char*> v;
        for (const auto& s : values) v.push_back(s.c_str());
        detail::check(kw_builder_tune_string(h_.get(), name.c_str(), v.data(), v.size(),
                                             default_value.c_str()));
        return Expr(name);
    }
    KernelBuilder& backend(kw_backend b) {
        detail::check(kw_builder_backend(h_.get(), b));
        return *this;
    }
    KernelBuilder& include_dir(const std::string& dir) {
        detail::check(kw_builder_include_dir(h_.get(), dir.c_str()));
        return *this;
    }
    KernelBuilder& params_as_defines(bool on) {
        detail::check(kw_builder_params_as_defines(h_.get(), on ? 1 : 0));
        return *this;
    }
    KernelBuilder& restriction(const Expr& e) {
        detail::check(kw_builder_restriction(h_.get(), e.c_str()));
        return *this;
    }
    KernelBuilder& problem_size(const Expr& x) {
        detail::check(kw_builder_problem_size(h_.get(), x.c_str(), nullptr, nullptr));
        return *this;
    }
    KernelBuilder& problem_size(const Expr& x, const Expr& y) {
        detail::check(kw_builder_problem_size(h_.get(), x.c_str(), y.c_str(), nullptr));
        return *this;
    }
    KernelBuilder& problem_size(const Expr& x, const Expr& y, const Expr& z) {
        detail::check(kw_builder_problem_size(h_.get(), x.c_str(), y.c_str(), z.c_str()));
        return *this;
    }
    KernelBuilder& block_size(const Expr& x, const Expr& y = 1, const Expr& z = 1) {
        detail::check(kw_builder_block_size(h_.get(), x.c_str(), y.c_str(), z.c_str()));
        return *this;
    }
    KernelBuilder& grid_size(const Expr& x, const Expr& y = 1, const Expr& z = 1) {
        detail::check(kw_builder_grid_size(h_.get(), x.c_str(), y.c_str(), z.c_str()));
        return *this;
    }
    KernelBuilder& grid_divisors(const Expr& x, const Expr& y = 1, const Expr& z = 1) {
        detail::check(kw_builder_grid_divisors(h_.get(), x.c_str(), y.c_str(), z.c_str()));
        return *this;
    }
    KernelBuilder& shared_memory(const Expr& bytes) {
        detail::check(kw_builder_shared_memory(h_.get(), bytes.c_str()));
        return *this;
    }
    KernelBuilder& define(const std::string& name, const Expr& value) {
        detail::check(kw_builder_define(h_.get(), name.c_str(), value.c_str()));
        return *this;
    }
    template <typename... E>
    KernelBuilder& template_args(const E&... args) {
        std::array<Expr, sizeof...(E)> exprs{Expr(args)...};
        std::array<const char*, sizeof...(E)> texts{};
        for (size_t i = 0; i < exprs.size(); ++i) texts[i] = exprs[i].c_str();
        detail::check(kw_builder_template_args(h_.get(), texts.data(), texts.size()));
        return *this;
    }
    KernelBuilder& compiler_flag(const std::string& flag) {
        const char* f = flag.c_str();
        detail::check(kw_builder_compiler_flags(h_.get(), &f, 1));
        return *this;
    }
    KernelBuilder& tuning_key(const std::string& key) {
        detail::check(kw_builder_tuning_key(h_.get(), key.c_str()));
        return *this;
    }
    template <typename T>
    KernelBuilder& buffer(const std::string& name, kw_access access) {
        detail::check(kw_builder_arg_buffer(h_.get(), name.c_str(), type_of<T>(), access));
        return *this;
    }
    template <typename T>
    KernelBuilder& input(const std::string& name) { return buffer<T>(name, KW_INPUT); }
    template <typename T>
    KernelBuilder& output(const std::string& name) { return buffer<T>(name, KW_OUTPUT); }
    template <typename T>
    KernelBuilder& inout(const std::string& name) { return buffer<T>(name, KW_INOUT); }
    template <typename T>
    KernelBuilder& scalar(const std::string& name) {
        detail::check(kw_builder_arg_scalar(h_.get(), name.c_str(), type_of<T>()));
        return *this;
    }
    KernelBuilder& buffer_len(const std::string& name, const Expr& len) {
        detail::check(kw_builder_buffer_len(h_.get(), name.c_str(), len.c_str()));
        return *this;
    }
    // The next kernel parameter: an OpenCL `__local` argument of `len` elements of T, passed
    // by the runtime (launches leave it out).
    template <typename T>
    KernelBuilder& local(const std::string& name, const Expr& len) {
        detail::check(kw_builder_arg_local(h_.get(), name.c_str(), type_of<T>(), len.c_str()));
        return *this;
    }
    // A CUDA `__constant__ T name[len];` of the source, set with Kernel::set_symbol.
    template <typename T>
    KernelBuilder& constant_symbol(const std::string& name, uint64_t len) {
        detail::check(kw_builder_constant_symbol(h_.get(), name.c_str(), type_of<T>(), len));
        return *this;
    }
    // How kw tune compares output buffer `name` with the reference (see kw_builder_tolerance).
    KernelBuilder& tolerance(const std::string& name, double rtol, double atol,
                             unsigned flags = 0) {
        detail::check(kw_builder_tolerance(h_.get(), name.c_str(), rtol, atol, flags));
        return *this;
    }
    // Checks the whole definition (throws kw::error listing every problem).
    void check() { detail::check(kw_builder_check(h_.get())); }
    kw_builder* get() const noexcept { return h_.get(); }

private:
    using Handle = detail::Handle<kw_builder, kw_builder_free>;
    explicit KernelBuilder(Handle h) : h_(std::move(h)) {}
    Handle h_;
};

// A device: one kernel-wisdom opens, or the application's own context.
class Device {
public:
    // By selector (an index or a name substring); empty: KW_DEVICE (device 0 when unset).
    static Device open(const std::string& selector = "") {
        kw_device* d = nullptr;
        detail::check(kw_device_open(&d, detail::c_str_or_null(selector)));
        return Device(d);
    }
    // The application's cl_context and cl_command_queue.
    static Device attach_opencl(void* cl_context, void* cl_command_queue) {
        kw_device* d = nullptr;
        detail::check(kw_device_attach_opencl(&d, cl_context, cl_command_queue));
        return Device(d);
    }
    // The calling thread's current CUDA context.
    static Device attach_cuda_current() {
        kw_device* d = nullptr;
        detail::check(kw_device_attach_cuda_current(&d));
        return Device(d);
    }
    // The CUDA runtime's (primary) context of device `ordinal`.
    static Device attach_cuda_primary(int ordinal = 0) {
        kw_device* d = nullptr;
        detail::check(kw_device_attach_cuda_primary(&d, ordinal));
        return Device(d);
    }
    std::string name() const {
        char buf[512];
        detail::check(kw_device_name(h_.get(), buf, sizeof buf));
        return buf;
    }
    kw_backend backend() const {
        int b = 0;
        detail::check(kw_device_backend(h_.get(), &b));
        return static_cast<kw_backend>(b);
    }
    void synchronize() const { detail::check(kw_device_synchronize(h_.get())); }
    kw_device* get() const noexcept { return h_.get(); }

private:
    explicit Device(kw_device* d) : h_(d) {}
    detail::Handle<kw_device, kw_device_free> h_;
};

// A tunable kernel on a device: selects a configuration per problem size from wisdom,
// compiles it once, launches it on the application's stream or queue.
class WisdomKernel {
public:
    WisdomKernel(const KernelBuilder& builder, const Device& device,
                 const std::string& wisdom_dir = "") {
        kw_kernel* k = nullptr;
        detail::check(kw_kernel_create(&k, builder.get(), device.get(),
                                       detail::c_str_or_null(wisdom_dir)));
        h_ = Handle(k);
        detail::check(kw_device_backend(device.get(), &backend_));
    }

    // Launches on `stream` (cudaStream_t / CUstream / cl_command_queue; nullptr: the
    // device's own) with the arguments packed with their types.
    template <typename... Args>
    void launch(void* stream, const Args&... args) const {
        std::array<kw_arg, sizeof...(Args)> packed{detail::pack_on(backend_, args)...};
        detail::check(kw_kernel_launch(h_.get(), stream, packed.data(), packed.size()));
    }
    template <typename... Args>
    void operator()(void* stream, const Args&... args) const {
        launch(stream, args...);
    }
    // OpenCL: launches on `queue` after `wait` events and returns the launch's cl_event
    // (release it with clReleaseEvent).
    template <typename... Args>
    void* launch_with_event(void* queue, const std::vector<void*>& wait,
                            const Args&... args) const {
        std::array<kw_arg, sizeof...(Args)> packed{detail::pack_on(backend_, args)...};
        void* event = nullptr;
        detail::check(kw_kernel_launch_opencl(h_.get(), queue, wait.data(), wait.size(), &event,
                                              packed.data(), packed.size()));
        return event;
    }
    // Launches with arguments packed by hand.
    void launch_args(void* stream, const std::vector<kw_arg>& args) const {
        detail::check(kw_kernel_launch(h_.get(), stream, args.data(), args.size()));
    }
    // Sets constant-memory symbol `name` (declared with KernelBuilder::constant_symbol).
    template <typename T>
    void set_symbol(const std::string& name, const std::vector<T>& data) const {
        detail::check(kw_kernel_set_symbol(h_.get(), name.c_str(), type_of<T>(),
                                           data.data(), data.size()));
    }
    // The configuration launches of this problem size use ("name=value,...").
    std::string config(int64_t x, int64_t y = 1, int64_t z = 1) const {
        char buf[4096];
        detail::check(kw_kernel_config(h_.get(), x, y, z, buf, sizeof buf));
        return buf;
    }
    kw_kernel* get() const noexcept { return h_.get(); }

private:
    using Handle = detail::Handle<kw_kernel, kw_kernel_free>;
    Handle h_;
    int backend_ = 0;
};

// The library's tuned routines on a device (kw_library_*). Buffers are what launches take:
// kw::buffer<float>(cl_mem or pointer[, count]), a float* CUDA device pointer, or a kw_arg.
// Every failure (a length that does not fit the shape, a buffer of another type) throws
// kw::error naming the routine.
class Library {
public:
    explicit Library(const Device& device, const std::string& wisdom_dir = "") {
        kw_library* l = nullptr;
        detail::check(
            kw_library_create(&l, device.get(), detail::c_str_or_null(wisdom_dir)));
        h_ = Handle(l);
        detail::check(kw_device_backend(device.get(), &backend_));
    }
    // output (cols x rows) = the transpose of input (rows x cols, row-major).
    template <typename In, typename Out>
    void transpose(size_t rows, size_t cols, const In& input, const Out& output) const {
        detail::check(kw_library_transpose(h_.get(), rows, cols, arg(input),
                                           arg(output)));
    }
    // The sum of input's elements (waits for it).
    template <typename In>
    float sum(const In& input) const {
        float out = 0.0f;
        detail::check(kw_library_sum(h_.get(), arg(input), &out));
        return out;
    }
    // output = c0 * centre + c1 * (six neighbours) on an nx x ny x nz grid, boundary copied.
    template <typename In, typename Out>
    void stencil3d(size_t nx, size_t ny, size_t nz, float c0, float c1, const In& input,
                   const Out& output) const {
        detail::check(kw_library_stencil3d(h_.get(), nx, ny, nz, c0, c1, arg(input),
                                           arg(output)));
    }
    // c = alpha a b + beta c (a m x k, b k x n, c m x n, column-major).
    template <typename A, typename B, typename C>
    void gemm(size_t m, size_t n, size_t k, float alpha, const A& a, const B& b, float beta,
              const C& c) const {
        detail::check(kw_library_gemm(h_.get(), m, n, k, alpha, arg(a),
                                      arg(b), beta, arg(c)));
    }
    // gemm on IEEE half matrices (their bits: uint16_t buffers), sums in float; CUDA only.
    template <typename A, typename B, typename C>
    void gemm_f16(size_t m, size_t n, size_t k, float alpha, const A& a, const B& b, float beta,
                  const C& c) const {
        detail::check(kw_library_gemm_f16(h_.get(), m, n, k, alpha, arg(a),
                                          arg(b), beta, arg(c)));
    }
    // output (width x height) = the 2D convolution of input ((width + filter_width - 1) x
    // (height + filter_height - 1)) with `filter` (filter_width x filter_height, row-major).
    template <typename In, typename Out>
    void convolution(size_t width, size_t height, size_t filter_width, size_t filter_height,
                     const std::vector<float>& filter, const In& input,
                     const Out& output) const {
        // (A product that wraps around is refused by kw_library_convolution.)
        if (filter.size() != filter_width * filter_height) {
            std::ostringstream msg;
            msg << "library routine `convolution`: filter holds " << filter.size()
                << " elements, the shape needs " << filter_width << " x " << filter_height;
            throw error(KW_ERROR_INVALID, msg.str());
        }
        detail::check(kw_library_convolution(h_.get(), width, height, filter_width,
                                             filter_height, filter.data(),
                                             arg(input), arg(output)));
    }
    // temp_out = `iterations` steps of Rodinia's hotspot (see kw_library_hotspot).
    template <typename T, typename P, typename O>
    void hotspot(size_t nx, size_t ny, size_t iterations, float step_div_cap, float rx_1,
                 float ry_1, float rz_1, float amb_temp, const T& temp_in, const P& power,
                 const O& temp_out) const {
        detail::check(kw_library_hotspot(h_.get(), nx, ny, iterations, step_div_cap, rx_1, ry_1,
                                         rz_1, amb_temp, arg(temp_in),
                                         arg(power), arg(temp_out)));
    }
    // One n-body step (see kw_library_nbody).
    template <typename P, typename V, typename PO, typename VO>
    void nbody(size_t n, float dt, float softening, float damping, const P& pos, const V& vel,
               const PO& pos_out, const VO& vel_out) const {
        detail::check(kw_library_nbody(h_.get(), n, dt, softening, damping, arg(pos),
                                       arg(vel), arg(pos_out),
                                       arg(vel_out)));
    }
    kw_library* get() const noexcept { return h_.get(); }

private:
    template <typename A>
    kw_arg arg(const A& a) const {
        return detail::pack_on(backend_, a);
    }
    using Handle = detail::Handle<kw_library, kw_library_free>;
    Handle h_;
    int backend_ = 0;
};

}  // namespace kw

#endif  // KERNEL_WISDOM_HPP
