// The OpenCL devices of every platform whose name contains a substring, for
// the OpenCL micro-benchmarks' DEVICE_NAME_SUBSTRING argument.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

struct ClDeviceRef {
    cl_platform_id platform;
    cl_device_id device;
    std::string name;
};

inline std::vector<ClDeviceRef> opencl_devices_matching(const std::string& filter) {
    std::vector<ClDeviceRef> found;
    cl_uint np = 0;
    if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return found;
    std::vector<cl_platform_id> platforms(np);
    clGetPlatformIDs(np, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) continue;
        std::vector<cl_device_id> devices(nd);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
        for (cl_device_id d : devices) {
            char name[256] = {};
            clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
            if (std::string(name).find(filter) != std::string::npos) found.push_back({p, d, name});
        }
    }
    return found;
}
