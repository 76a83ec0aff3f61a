// The fp32 FMA throughput an OpenCL device reaches: the denominator for
// "prefill at N % of the FMA peak OpenCL can reach" (BENCHMARKS.md), measured
// rather than taken from a datasheet (clocks under load, what the driver's
// compiler makes of the code).
//
// Every work-item runs kChains independent FMA chains for kIterations steps
// (enough independent work to hide the FMA latency), then stores their sum so
// nothing is optimised away. Times come from OpenCL event profiling; the best
// of several runs is reported.
//
// usage: bench_opencl_fma_peak [DEVICE_NAME_SUBSTRING]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_devices.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kChains = 16;
constexpr int kIterations = 4096;

const char* const kSource = R"(
kernel void fma_peak(global float* out, float a, float b) {
    float c[CHAINS];
    for (int i = 0; i < CHAINS; ++i) c[i] = (float)(get_global_id(0) + i) * 1e-7f;
    for (int it = 0; it < ITERATIONS; ++it) {
#pragma unroll
        for (int i = 0; i < CHAINS; ++i) c[i] = fma(c[i], a, b);
    }
    float s = 0.f;
    for (int i = 0; i < CHAINS; ++i) s += c[i];
    out[get_global_id(0)] = s;
}
)";

bool check(cl_int err, const char* what) {
    if (err == CL_SUCCESS) return true;
    std::fprintf(stderr, "%s failed: %d\n", what, err);
    return false;
}

// Best FMA throughput of `device` in TFLOP/s (2 flops per FMA), or < 0 on error.
double measure(cl_device_id device) {
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (!check(err, "clCreateContext")) return -1;
    cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    const char* source = kSource;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, nullptr, &err);
    double best = -1;
    const std::string options = "-cl-std=CL1.2 -DCHAINS=" + std::to_string(kChains) + " -DITERATIONS=" + std::to_string(kIterations);
    if (check(clBuildProgram(prog, 1, &device, options.c_str(), nullptr, nullptr), "clBuildProgram")) {
        cl_kernel k = clCreateKernel(prog, "fma_peak", &err);
        cl_uint units = 1;
        clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
        const size_t local = 256, global = size_t(units) * 2048 * 4;  // several full waves
        cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, global * sizeof(float), nullptr, &err);
        const float a = 0.999999f, b = 1e-7f;
        clSetKernelArg(k, 0, sizeof out, &out);
        clSetKernelArg(k, 1, sizeof a, &a);
        clSetKernelArg(k, 2, sizeof b, &b);
        for (int run = 0; run < 6; ++run) {  // the first run also warms up clocks
            cl_event ev = nullptr;
            if (!check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &ev), "clEnqueueNDRangeKernel")) break;
            clWaitForEvents(1, &ev);
            cl_ulong t0 = 0, t1 = 0;
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
            clReleaseEvent(ev);
            const double flops = 2.0 * double(global) * kChains * kIterations;
            if (t1 > t0) best = std::max(best, flops / (double(t1 - t0) * 1e-9) * 1e-12);
        }
        clReleaseMemObject(out);
        clReleaseKernel(k);
    }
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<ClDeviceRef> devices = opencl_devices_matching(argc > 1 ? argv[1] : "");
    if (devices.empty()) std::fprintf(stderr, "no OpenCL device%s\n", argc > 1 ? " of that name" : "");
    for (const ClDeviceRef& d : devices) {
        cl_uint units = 0, mhz = 0;
        clGetDeviceInfo(d.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
        clGetDeviceInfo(d.device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, nullptr);
        const double tflops = measure(d.device);
        std::printf("%s (%u compute units, max %u MHz): fp32 FMA %.2f TFLOP/s\n", d.name.c_str(), units, mhz, tflops);
    }
    return devices.empty() ? 1 : 0;
}
