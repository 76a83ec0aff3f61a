// Typed kernel arguments. Each kernel's parameter list is written once as a
// C++ type (KernelParams, see cl_kernel_signatures.hpp); set_args then takes
// one value per parameter, checks at compile time that each value fits its
// parameter (a scalar must be exactly the OpenCL type the kernel declares,
// so its size always matches), numbers the arguments itself, and names the
// kernel and the argument index when clSetKernelArg fails:
//
//   l.set_args<RmsnormParams>(at(x), at(w), at(y), cl_int(D), cl_float(eps), LocalFloats{wg});
#pragma once

#include "cl_util.hpp"

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace hetero::opencl {

// Parameter kinds, as kernels/*.cl declare them; scalars (cl_int, cl_long,
// cl_ulong, cl_float) and structs passed by value stand for themselves.
struct Buffer {};   // `global T* b, ulong off`: a buffer and a byte offset (two arguments)
struct Pointer {};  // `global T* b`: a buffer alone (its offset 0, or in the kernel's params struct)
struct Local {};    // `local T* p`: local memory the host sizes

template <class... Kinds>
struct KernelParams {};

// Values for a Buffer parameter: bytes of a buffer, or a bound tensor's,
// whose buffer and offset are known only at each run.
struct BufferAt {
    cl_mem mem = nullptr;
    cl_ulong offset = 0;
    int32_t bound = -1;  // >= 0: the bound tensor (mem and offset unused)
    static BufferAt at_run(int32_t tensor) { return BufferAt{nullptr, 0, tensor}; }
};

// Values for a Pointer parameter: a buffer (offset 0), or a tensor whose
// byte offset the kernel reads from byte `field` of its params struct (the
// caller writes a fixed one there; a bound one is written at each run).
struct PointerAt {
    BufferAt at;
    int32_t field = -1;
};

// Values for a Local parameter.
struct LocalFloats {
    size_t count;
};

// An argument of a bound tensor, set again at each run where it changed.
struct BoundArg {
    uint32_t tensor;
    cl_uint arg;  // index of the buffer argument; the offset follows it
    int32_t param_offset = -1;  // >= 0: the offset is this byte of the launch's params instead
    cl_mem last_mem = nullptr;
    uint64_t last_offset = ~uint64_t(0);
};

// An owned kernel object.
struct KernelRelease {
    void operator()(cl_kernel k) const { clReleaseKernel(k); }
};
using KernelPtr = std::unique_ptr<std::remove_pointer_t<cl_kernel>, KernelRelease>;

// clSetKernelArg, throwing sdk::Error naming the kernel and argument on failure.
inline void set_arg_bytes(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
    const cl_int err = clSetKernelArg(kernel, index, size, value);
    if (err == CL_SUCCESS) return;
    char name[128] = {};
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
    cl_check(err, ("clSetKernelArg (" + std::string(name) + ", argument " + std::to_string(index) + ")").c_str());
}

template <class T>
void set_arg(cl_kernel kernel, cl_uint index, const T& value) {
    static_assert((std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>) || std::is_same_v<T, cl_mem>,
                  "kernel arguments are buffers or values copied byte for byte");
    set_arg_bytes(kernel, index, sizeof value, &value);
}

namespace detail {

template <class Kind>
inline constexpr cl_uint kArgWidth = std::is_same_v<Kind, Buffer> ? 2 : 1;

template <class... Kinds>
constexpr cl_uint arg_count(KernelParams<Kinds...>) {
    return (cl_uint(0) + ... + kArgWidth<Kinds>);
}

template <class T>
constexpr cl_uint first_arg_of(KernelParams<>) {
    static_assert(!sizeof(T), "the kernel has no parameter of this kind");
    return 0;
}

template <class T, class Kind, class... Kinds>
constexpr cl_uint first_arg_of(KernelParams<Kind, Kinds...>) {
    if constexpr (std::is_same_v<T, Kind>) return 0;
    else return kArgWidth<Kind> + first_arg_of<T>(KernelParams<Kinds...>{});
}

// Sets the arguments of one kernel from `next` on, recording bound tensors.
struct ArgWriter {
    cl_kernel kernel;
    std::vector<BoundArg>& bound;
    cl_uint next;

    template <class Kind, class V>
    void put(const V& v) {
        if constexpr (std::is_same_v<Kind, Buffer>) {
            static_assert(std::is_same_v<V, BufferAt>, "a `global T*, ulong` parameter takes a BufferAt");
            if constexpr (std::is_same_v<V, BufferAt>) {
                if (v.bound >= 0) {
                    bound.push_back(BoundArg{uint32_t(v.bound), next});
                } else {
                    set_arg(kernel, next, v.mem);
                    set_arg(kernel, next + 1, v.offset);
                }
            }
        } else if constexpr (std::is_same_v<Kind, Pointer>) {
            static_assert(std::is_same_v<V, cl_mem> || std::is_same_v<V, PointerAt>, "a `global T*` parameter takes a cl_mem or a PointerAt");
            if constexpr (std::is_same_v<V, cl_mem>) {
                set_arg(kernel, next, v);
            } else if constexpr (std::is_same_v<V, PointerAt>) {
                if (v.at.bound >= 0) bound.push_back(BoundArg{uint32_t(v.at.bound), next, v.field});
                else set_arg(kernel, next, v.at.mem);
            }
        } else if constexpr (std::is_same_v<Kind, Local>) {
            static_assert(std::is_same_v<V, LocalFloats>, "a `local T*` parameter takes LocalFloats");
            if constexpr (std::is_same_v<V, LocalFloats>) set_arg_bytes(kernel, next, v.count * sizeof(float), nullptr);
        } else {
            static_assert(std::is_same_v<V, Kind>,
                          "a scalar parameter takes exactly the OpenCL type the kernel declares (cl_int, cl_ulong, cl_float, ...)");
            if constexpr (std::is_same_v<V, Kind>) set_arg(kernel, next, v);
        }
        next += kArgWidth<Kind>;
    }

    template <class... Kinds, class... V>
    void put_all(KernelParams<Kinds...>, const V&... v) {
        static_assert(sizeof...(Kinds) == sizeof...(V), "one value per kernel parameter");
        (put<Kinds>(v), ...);
    }
};

}  // namespace detail

// Number of OpenCL arguments of a parameter list (a Buffer is two).
template <class Params>
inline constexpr cl_uint kArgCount = detail::arg_count(Params{});

// Index of the first argument of kind T (e.g. a params struct) in `Params`.
template <class Params, class T>
inline constexpr cl_uint kFirstArgOf = detail::first_arg_of<T>(Params{});

// Sets the arguments `Params` lists, one value each, in order; `Before`
// lists the parameters that come first (set by another call), for kernels
// whose parameter lists end in optional parts. Bound tensors' arguments are
// left unset and appended to `bound`.
template <class Params, class Before = KernelParams<>, class... V>
void set_args(cl_kernel kernel, std::vector<BoundArg>& bound, const V&... values) {
    detail::ArgWriter{kernel, bound, kArgCount<Before>}.put_all(Params{}, values...);
}

}  // namespace hetero::opencl
