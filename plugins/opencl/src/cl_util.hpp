// Small helpers over the OpenCL C API: error mapping and info queries.
#pragma once

#include <CL/cl.h>
#include <hetero/sdk/hash.hpp>
#include <hetero/sdk/provider.hpp>

#include <string>
#include <vector>

namespace hetero::opencl {

inline const char* cl_error_name(cl_int e) {
    switch (e) {
        case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";  // the ICD loader found no driver
        case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
        case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
        case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
        case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
        case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
        case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
        case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
        case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
        case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
        case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
        case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
        case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
        case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
        case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
        case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
        case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
        case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
        case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
        case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
        case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
        case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
        case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
        case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
        case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
        case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
        case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
        case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
        case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
        default: return "CL error";
    }
}

// Status an OpenCL error maps to: allocation failures are out-of-memory,
// `otherwise` (chosen by the caller's context) for the rest.
inline hetero_status status_of(cl_int e, hetero_status otherwise) {
    switch (e) {
        case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        case CL_OUT_OF_HOST_MEMORY: return HETERO_ERR_OUT_OF_MEMORY;
        default: return otherwise;
    }
}

inline void cl_check(cl_int e, const char* what, hetero_status otherwise = HETERO_ERR_INTERNAL) {
    if (e != CL_SUCCESS)
        sdk::fail(status_of(e, otherwise), std::string(what) + " failed: " + cl_error_name(e) + " (" + std::to_string(e) + ")");
}

inline std::string device_string(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
    while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
    return s;
}

inline std::string platform_string(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
    while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
    return s;
}

// A scalar device property, or `fallback` when the query fails (e.g. a vendor
// query on another vendor's device).
template <class T>
T device_value(cl_device_id d, cl_device_info what, T fallback = T{}) {
    T v{};
    return clGetDeviceInfo(d, what, sizeof(T), &v, nullptr) == CL_SUCCESS ? v : fallback;
}

inline bool has_extension(const std::string& extensions, const char* name) {
    const std::string padded = " " + extensions + " ";
    return padded.find(std::string(" ") + name + " ") != std::string::npos;
}

using sdk::fnv1a;  // cache keys (hetero/sdk/hash.hpp)

}  // namespace hetero::opencl
