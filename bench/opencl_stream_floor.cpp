// The fastest batch-1 decode an OpenCL device allows, measured: every decode
// kernel has to stream its weights once, so a chain of pure streaming-read
// kernels with the same byte counts, launched back to back on one in-order
// queue like the provider's, is a floor no real decode step can beat.
//
// Prints, for each read size: the best event-timed kernel duration and the
// per-launch time of a back-to-back chain (launch gaps included), as GB/s.
// Then the chain of one TinyLlama-1.1B-shaped decode step (5 launches per
// layer with the provider's fusions, 22 layers, the output head) at Q4_0 and
// Q8_0 sizes, run like the provider runs it (a kernel object per launch,
// arguments set beforehand): its time per token, how much of it the host
// spent in enqueue calls, tokens/s and the fraction of the datasheet
// bandwidth given on the command line; and, where the device has
// cl_khr_command_buffer, the same step recorded once and submitted whole.
// Last, what an argument list costs per launch (kernels that do nothing,
// with 2 buffers + 2 scalars, 9 buffers + 27 scalars, 9 buffers + a struct).
//
// usage: bench_opencl_stream_floor [DEVICE_NAME_SUBSTRING] [DATASHEET_GB_PER_S]
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS  // clCreateCommandQueue: the device may be OpenCL 1.2
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "cl_devices.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

// Each work-item folds uint4 words in a grid-stride loop, four loads at a
// time; the store never happens in practice but the compiler cannot drop
// the loads.
const char* const kSource = R"(
kernel void stream_read(global const uint4* p, uint first, uint n, global uint* out) {
    p += first;
    uint4 acc = (uint4)(0);
    const uint g = get_global_size(0);
    uint i = get_global_id(0);
    for (; i + 3 * g < n; i += 4 * g) {  // four independent loads in flight
        const uint4 a = p[i], b = p[i + g], c = p[i + 2 * g], d = p[i + 3 * g];
        acc ^= a ^ b ^ c ^ d;
    }
    for (; i < n; i += g) acc ^= p[i];
    const uint s = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (s == 0x9e3779b9u) out[0] = s;
}

// Kernels that do nothing but take arguments, for the enqueue cost of an
// argument list: 2 buffers + 2 scalars; 9 buffers + 27 scalars; 9 buffers +
// the scalars packed in one struct.
typedef struct { ulong a[10]; int b[10]; float c[2]; } Packed;
kernel void args_small(global uint* p, uint a, uint b, global uint* out) {
    if (get_global_id(0) == 0xffffffffu) out[0] = p[a] + b;
}
kernel void args_wide(global uint* p0, ulong o0, global uint* p1, ulong o1, global uint* p2, ulong o2,
                      global uint* p3, ulong o3, global uint* p4, ulong o4, global uint* p5, ulong o5,
                      global uint* p6, ulong o6, global uint* p7, ulong o7, int a, int b, int c, int d, int e,
                      int f, int g, int h, int i, int j, int k, int l, int m, int n, int o, int q, int r, int s,
                      global uint* out) {
    if (get_global_id(0) == 0xffffffffu)
        out[0] = p0[o0] + p1[o1] + p2[o2] + p3[o3] + p4[o4] + p5[o5] + p6[o6] + p7[o7] + a + b + c + d + e + f + g +
                 h + i + j + k + l + m + n + o + q + r + s;
}
kernel void args_packed(global uint* p0, global uint* p1, global uint* p2, global uint* p3, global uint* p4,
                        global uint* p5, global uint* p6, global uint* p7, Packed prm, global uint* out) {
    if (get_global_id(0) == 0xffffffffu)
        out[0] = p0[prm.a[0]] + p1[0] + p2[0] + p3[0] + p4[0] + p5[0] + p6[0] + p7[prm.b[3]] + (uint)prm.c[1];
}
)";

bool check(cl_int err, const char* what) {
    if (err == CL_SUCCESS) return true;
    std::fprintf(stderr, "%s failed: %d\n", what, err);
    std::exit(1);
}

// Wall time of `reps` passes of `launches` back-to-back launches on `q`
// (`enqueue_one(i)` enqueues launch i, with no event; the first is flushed at
// once, as the provider does), one wait at the end of a pass. Returns the
// best pass in us; `enqueue_us`, when given, gets how long that pass's
// enqueue calls took (when close to the total, the host's submission rate
// is the limit).
double best_pass_us(cl_command_queue q, int reps, size_t launches, const std::function<void(size_t)>& enqueue_one,
                    double* enqueue_us = nullptr) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < launches; ++i) {
            enqueue_one(i);
            if (i == 0) clFlush(q);
        }
        const auto t1 = std::chrono::steady_clock::now();
        clFinish(q);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (us < best && enqueue_us) *enqueue_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        best = std::min(best, us);
    }
    return best;
}

struct Stream {
    cl_context ctx;
    cl_command_queue timed;  // with profiling, for kernel durations
    cl_command_queue q;      // without, like the provider's, for chains
    cl_kernel k;
    cl_mem data, out;
    cl_uint units;
    uint64_t capacity;  // bytes of `data`
    uint64_t next = 0;  // where the next read starts: each read takes fresh
                        // bytes, so the 50 MB L2 of an H100 cannot serve a
                        // chain that real weights would not fit in
    size_t local = 256;

    // Points `kernel` (a stream_read) at the next `bytes` of fresh memory;
    // returns its global size for `groups_per_unit` work-groups per compute
    // unit (fewer where the read is smaller).
    size_t set_read(cl_kernel kernel, uint64_t bytes, int groups_per_unit) {
        const cl_uint n = cl_uint(bytes / 16);
        if (next + bytes > capacity) next = 0;
        const cl_uint first = cl_uint(next / 16);
        next += (bytes + 4095) / 4096 * 4096;
        clSetKernelArg(kernel, 0, sizeof data, &data);
        clSetKernelArg(kernel, 1, sizeof first, &first);
        clSetKernelArg(kernel, 2, sizeof n, &n);
        clSetKernelArg(kernel, 3, sizeof out, &out);
        const size_t global = size_t(units) * size_t(groups_per_unit) * local;
        return std::max<size_t>(local, std::min(global, (size_t(n) + local - 1) / local * local));
    }

    // Enqueues one read of `bytes`; returns the event when asked.
    void enqueue(cl_command_queue on, uint64_t bytes, int groups_per_unit, cl_event* ev) {
        const size_t global = set_read(k, bytes, groups_per_unit);
        check(clEnqueueNDRangeKernel(on, k, 1, nullptr, &global, &local, 0, nullptr, ev), "clEnqueueNDRangeKernel");
    }

    // Best event-timed duration of one read, in microseconds.
    double kernel_us(uint64_t bytes, int gpu) {
        double best = 1e30;
        for (int r = 0; r < 10; ++r) {
            cl_event ev = nullptr;
            enqueue(timed, bytes, gpu, &ev);
            clWaitForEvents(1, &ev);
            cl_ulong a = 0, b = 0;
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, nullptr);
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr);
            clReleaseEvent(ev);
            best = std::min(best, double(b - a) * 1e-3);
        }
        return best;
    }

    // best_pass_us over the chain `sizes`, one kernel object whose
    // arguments are set at every launch.
    double chain_us(const std::vector<uint64_t>& sizes, int gpu, int reps, double* enqueue_us = nullptr) {
        return best_pass_us(q, reps, sizes.size(), [&](size_t i) { enqueue(q, sizes[i], gpu, nullptr); }, enqueue_us);
    }
};

// The version of `name` the device reports (CL_MAKE_VERSION), 0 if none.
cl_version extension_version(cl_device_id device, const char* name) {
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes) != CL_SUCCESS) return 0;
    std::vector<cl_name_version> list(bytes / sizeof(cl_name_version));
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, list.data(), nullptr);
    for (const cl_name_version& e : list)
        if (std::string(e.name) == name) return e.version;
    return 0;
}

// The same chain recorded once into a cl_khr_command_buffer and submitted
// with one call per pass: how much of the per-launch cost is the host's.
// Best pass in us, or < 0 when the device has no usable command buffers.
double command_buffer_chain_us(Stream& s, cl_platform_id platform, const std::vector<uint64_t>& sizes, int gpu, int reps) {
    auto get = [&](const char* fn) { return clGetExtensionFunctionAddressForPlatform(platform, fn); };
    auto create = reinterpret_cast<clCreateCommandBufferKHR_fn>(get("clCreateCommandBufferKHR"));
    auto record = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(get("clCommandNDRangeKernelKHR"));
    auto finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(get("clFinalizeCommandBufferKHR"));
    auto submit = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(get("clEnqueueCommandBufferKHR"));
    auto release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(get("clReleaseCommandBufferKHR"));
    if (!create || !record || !finalize || !submit || !release) return -1;
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr cb = create(1, &s.q, nullptr, &err);
    if (err != CL_SUCCESS) {
        std::fprintf(stderr, "clCreateCommandBufferKHR: %d\n", err);
        return -1;
    }
    cl_sync_point_khr prev = 0;
    for (size_t i = 0; i < sizes.size() && err == CL_SUCCESS; ++i) {
        // Arguments are captured when a command is recorded.
        const size_t global = s.set_read(s.k, sizes[i], gpu);
        cl_sync_point_khr point = 0;
        err = record(cb, nullptr, nullptr, s.k, 1, nullptr, &global, &s.local, i ? 1 : 0, i ? &prev : nullptr, &point, nullptr);
        prev = point;
    }
    if (err == CL_SUCCESS) err = finalize(cb);
    double best = -1;
    if (err != CL_SUCCESS) std::fprintf(stderr, "recording the command buffer: %d\n", err);
    for (int r = 0; r < reps && err == CL_SUCCESS; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        err = submit(1, &s.q, cb, 0, nullptr, nullptr);
        clFinish(s.q);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (best < 0 || us < best) best = us;
    }
    release(cb);
    return err == CL_SUCCESS ? best : -1;
}

// The chain as the provider runs it: one kernel object per launch with its
// arguments set beforehand, so a pass is nothing but enqueue calls. Best
// pass in us; its enqueue calls' share in `enqueue_us`.
double preset_chain_us(Stream& s, cl_program prog, const std::vector<uint64_t>& sizes, int gpu, int reps, double* enqueue_us) {
    std::vector<cl_kernel> kernels(sizes.size());
    std::vector<size_t> globals(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
        cl_int err = CL_SUCCESS;
        kernels[i] = clCreateKernel(prog, "stream_read", &err);
        check(err, "clCreateKernel");
        globals[i] = s.set_read(kernels[i], sizes[i], gpu);
    }
    const double best = best_pass_us(s.q, reps, kernels.size(), [&](size_t i) {
        check(clEnqueueNDRangeKernel(s.q, kernels[i], 1, nullptr, &globals[i], &s.local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    }, enqueue_us);
    for (cl_kernel k : kernels) clReleaseKernel(k);
    return best;
}

// Per-launch time of 111 back-to-back launches of `name` (a kernel that does
// nothing) over a full GPU-sized grid, every buffer argument `buf` and every
// scalar zero; the best of 20 passes, in us.
double argument_cost_us(cl_program prog, cl_command_queue q, cl_mem buf, cl_uint units, const char* name) {
    std::vector<cl_kernel> kernels(111);
    for (cl_kernel& k : kernels) {
        cl_int err = CL_SUCCESS;
        k = clCreateKernel(prog, name, &err);
        check(err, "clCreateKernel");
        cl_uint n = 0;
        clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr);
        for (cl_uint a = 0; a < n; ++a) {
            char type[64] = {};
            check(clGetKernelArgInfo(k, a, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, nullptr), "clGetKernelArgInfo");
            const std::string t = type;
            const unsigned char zero[128] = {};
            if (t.find('*') != std::string::npos) check(clSetKernelArg(k, a, sizeof buf, &buf), "clSetKernelArg");
            else check(clSetKernelArg(k, a, t == "Packed" ? 128 : t == "ulong" ? 8 : 4, zero), "clSetKernelArg");
        }
    }
    const size_t local = 256, global = size_t(units) * 8 * local;
    const double best = best_pass_us(q, 20, kernels.size(), [&](size_t i) {
        check(clEnqueueNDRangeKernel(q, kernels[i], 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    });
    for (cl_kernel k : kernels) clReleaseKernel(k);
    return best / double(kernels.size());
}

// One decode step of a TinyLlama-1.1B-shaped model (dim 2048, ffn 5632, 4 KV
// heads of 64, vocab 32000) with `bytes_per_weight` bytes per weight (Q4_0:
// 18/32, Q8_0: 34/32): Q/K/V, attention (a short KV cache), O, gate+up, down.
std::vector<uint64_t> decode_step(double bytes_per_weight) {
    auto w = [&](double rows, double cols) { return uint64_t(rows * cols * bytes_per_weight) / 16 * 16; };
    std::vector<uint64_t> s;
    for (int l = 0; l < 22; ++l) {
        s.push_back(w(2048 + 2 * 256, 2048));
        s.push_back(2 * 64 * 4 * 64 * 2);  // K and V cache rows, 64 positions, f16
        s.push_back(w(2048, 2048));
        s.push_back(w(2 * 5632, 2048));
        s.push_back(w(2048, 5632));
    }
    s.push_back(w(32000, 2048));
    return s;
}

uint64_t total(const std::vector<uint64_t>& v) {
    uint64_t t = 0;
    for (uint64_t x : v) t += x;
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string filter = argc > 1 ? argv[1] : "";
    const double datasheet_gbs = argc > 2 ? std::atof(argv[2]) : 0.0;
    const std::vector<ClDeviceRef> matching = opencl_devices_matching(filter);
    if (matching.empty()) {
        std::fprintf(stderr, "no OpenCL device whose name contains '%s'\n", filter.c_str());
        return 1;
    }
    cl_device_id device = matching[0].device;
    cl_platform_id platform = matching[0].platform;
    const char* name = matching[0].name.c_str();

    cl_int err = CL_SUCCESS;
    Stream s{};
    s.ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    s.timed = clCreateCommandQueue(s.ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue");
    s.q = clCreateCommandQueue(s.ctx, device, 0, &err);
    check(err, "clCreateCommandQueue");
    const char* source = kSource;
    cl_program prog = clCreateProgramWithSource(s.ctx, 1, &source, nullptr, &err);
    check(clBuildProgram(prog, 1, &device, "-cl-std=CL1.2 -cl-kernel-arg-info", nullptr, nullptr), "clBuildProgram");
    s.k = clCreateKernel(prog, "stream_read", &err);
    check(err, "clCreateKernel");
    clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof s.units, &s.units, nullptr);
    // Room for a Q8_0 step's 1.1 GB plus slack, within the largest allocation.
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
    const uint64_t max_bytes = std::min<uint64_t>(uint64_t(1536) << 20, max_alloc) / 4096 * 4096;
    s.capacity = max_bytes;
    s.data = clCreateBuffer(s.ctx, CL_MEM_READ_ONLY, max_bytes, nullptr, &err);
    check(err, "clCreateBuffer");
    s.out = clCreateBuffer(s.ctx, CL_MEM_WRITE_ONLY, 64, nullptr, &err);
    {  // non-constant bytes, in case a memory system compresses uniform data
        std::vector<cl_uint> fill(max_bytes / 4);
        cl_uint x = 2463534242u;
        for (cl_uint& v : fill) x ^= x << 13, x ^= x >> 17, x ^= x << 5, v = x;
        check(clEnqueueWriteBuffer(s.q, s.data, CL_TRUE, 0, max_bytes, fill.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
    }

    const int grids[] = {2, 4, 8, 16, 32};
    std::printf("%s, %u compute units\n", name, s.units);
    // Recorded command buffers (a graph of launches) skip the per-launch
    // host submission; only the versions whose entry points match the
    // header's (0.9.x) are used.
    const cl_version cbv = extension_version(device, "cl_khr_command_buffer");
    const bool command_buffers = CL_VERSION_MAJOR(cbv) == 0 && CL_VERSION_MINOR(cbv) == 9 && CL_VERSION_PATCH(cbv) >= 1;
    if (cbv) std::printf("cl_khr_command_buffer %u.%u.%u\n", CL_VERSION_MAJOR(cbv), CL_VERSION_MINOR(cbv), CL_VERSION_PATCH(cbv));
    else std::printf("no cl_khr_command_buffer\n");
    std::printf("%10s %10s %12s %10s %12s %10s %10s\n", "MB", "kernel_us", "kernel_GB/s", "chain_us", "chain_GB/s", "enqueue_us", "groups/CU");
    const double sizes_mb[] = {0.0625, 1, 2.36, 3.54, 6.49, 12.98, 36.9, 64, 256, 512};
    for (double mb : sizes_mb) {
        const uint64_t bytes = std::min<uint64_t>(uint64_t(mb * 1e6), max_bytes) / 16 * 16;
        double best_kernel = 1e30, best_chain = 1e30, best_enqueue = 0;
        int best_grid = 0;
        for (int gpu : grids) {
            best_kernel = std::min(best_kernel, s.kernel_us(bytes, gpu));
            const int launches = int(std::clamp<uint64_t>((uint64_t(256) << 20) / bytes, 3, 100));
            double enq = 0;
            const double c = s.chain_us(std::vector<uint64_t>(size_t(launches), bytes), gpu, 3, &enq) / launches;
            if (c < best_chain) best_chain = c, best_grid = gpu, best_enqueue = enq / launches;
        }
        std::printf("%10.2f %10.2f %12.1f %10.2f %12.1f %10.2f %10d\n", double(bytes) / 1e6, best_kernel, double(bytes) / best_kernel * 1e-3,
                    best_chain, double(bytes) / best_chain * 1e-3, best_enqueue, best_grid);
    }
    for (auto [label, bpw] : {std::pair{"Q4_0", 18.0 / 32}, std::pair{"Q8_0", 34.0 / 32}}) {
        const std::vector<uint64_t> step = decode_step(bpw);
        double best = 1e30, enqueue = 0;
        for (int gpu : grids) {
            double enq = 0;
            const double us = preset_chain_us(s, prog, step, gpu, 20, &enq);
            if (us < best) best = us, enqueue = enq;
        }
        const double gbs = double(total(step)) / best * 1e-3;
        std::printf("decode-step floor %s: %zu launches, %.1f MB, %.1f us/token (enqueue %.1f) = %.0f tok/s, %.0f GB/s", label,
                    step.size(), double(total(step)) / 1e6, best, enqueue, 1e6 / best, gbs);
        if (datasheet_gbs > 0) std::printf(" = %.1f %% of %.0f GB/s", 100 * gbs / datasheet_gbs, datasheet_gbs);
        std::printf("\n");
        if (!command_buffers) continue;
        double cb_best = -1;
        for (int gpu : grids) {
            const double us = command_buffer_chain_us(s, platform, step, gpu, 20);
            if (us > 0 && (cb_best < 0 || us < cb_best)) cb_best = us;
        }
        if (cb_best < 0) {
            std::printf("  as one command buffer: failed\n");
            continue;
        }
        const double cb_gbs = double(total(step)) / cb_best * 1e-3;
        std::printf("  as one command buffer: %.1f us/token = %.0f tok/s, %.0f GB/s", cb_best, 1e6 / cb_best, cb_gbs);
        if (datasheet_gbs > 0) std::printf(" = %.1f %% of %.0f GB/s", 100 * cb_gbs / datasheet_gbs, datasheet_gbs);
        std::printf("\n");
    }
    std::printf("per-launch time of empty kernels by argument list:");
    for (const char* k : {"args_small", "args_wide", "args_packed"})
        std::printf(" %s %.2f us", k, argument_cost_us(prog, s.q, s.out, s.units, k));
    std::printf("\n");
    clReleaseMemObject(s.data);
    clReleaseMemObject(s.out);
    clReleaseKernel(s.k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(s.q);
    clReleaseCommandQueue(s.timed);
    clReleaseContext(s.ctx);
    return 0;
}
