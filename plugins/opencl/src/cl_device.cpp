#include "cl_device.hpp"

#include "attention_programs.hpp"
#include "cl_util.hpp"
#include "program_recipes.hpp"

#include <CL/cl_ext.h>
#include <hetero/sdk/device_resource.hpp>
#include <hetero/sdk/dispatch_profile.hpp>
#include <hetero/sdk/host_cpu.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Vendor queries, defined here in case the installed headers predate them.
#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#endif
#ifndef CL_DEVICE_WAVEFRONT_WIDTH_AMD
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#endif
#ifndef CL_DEVICE_SUB_GROUP_SIZES_INTEL
#define CL_DEVICE_SUB_GROUP_SIZES_INTEL 0x4108
#endif

namespace hetero::opencl {
namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

uint32_t query_subgroup_size(cl_device_id d, const DeviceInfo& info) {
    if (has_extension(info.extensions, "cl_nv_device_attribute_query"))
        if (const auto w = device_value<cl_uint>(d, CL_DEVICE_WARP_SIZE_NV)) return w;
    if (has_extension(info.extensions, "cl_amd_device_attribute_query"))
        if (const auto w = device_value<cl_uint>(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD)) return w;
    if (has_extension(info.extensions, "cl_intel_required_subgroup_size")) {
        // A list of supported sizes; the largest is what wide kernels use.
        size_t n = 0;
        if (clGetDeviceInfo(d, CL_DEVICE_SUB_GROUP_SIZES_INTEL, 0, nullptr, &n) == CL_SUCCESS && n >= sizeof(size_t)) {
            std::vector<size_t> sizes(n / sizeof(size_t));
            if (clGetDeviceInfo(d, CL_DEVICE_SUB_GROUP_SIZES_INTEL, n, sizes.data(), nullptr) == CL_SUCCESS)
                return uint32_t(*std::max_element(sizes.begin(), sizes.end()));
        }
    }
    if (lower(info.vendor).find("nvidia") != std::string::npos) return 32;
    return 0;
}

// f32 FMA lanes x 2 flops per compute unit and clock, per vendor; a hint only.
double flops_per_cu_clock(const DeviceInfo& info) {
    const std::string v = lower(info.vendor);
    if (info.type & CL_DEVICE_TYPE_GPU) {
        if (v.find("nvidia") != std::string::npos) return 256;  // 128 FP32 lanes per SM
        if (v.find("advanced micro") != std::string::npos || v.find("amd") != std::string::npos) return 128;
        if (v.find("intel") != std::string::npos) return 16;  // CUs are EUs: 8 lanes
        if (v.find("arm") != std::string::npos || v.find("qualcomm") != std::string::npos) return 64;
        return 64;
    }
    if (info.type & CL_DEVICE_TYPE_CPU) return has_extension(info.extensions, "cl_khr_fp64") ? 32 : 16;  // 2x 8-wide FMA
    return 16;
}

DeviceInfo query_info(cl_platform_id p, cl_device_id d) {
    DeviceInfo i;
    i.name = device_string(d, CL_DEVICE_NAME);
    i.vendor = device_string(d, CL_DEVICE_VENDOR);
    i.driver_version = device_string(d, CL_DRIVER_VERSION);
    i.platform_name = platform_string(p, CL_PLATFORM_NAME);
    i.platform_version = platform_string(p, CL_PLATFORM_VERSION);
    i.extensions = device_string(d, CL_DEVICE_EXTENSIONS);
    i.type = device_value<cl_device_type>(d, CL_DEVICE_TYPE);
    i.global_mem = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    i.max_alloc = device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    i.local_mem = device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
    i.compute_units = device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    i.clock_mhz = device_value<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    i.max_wg = std::max<size_t>(1, device_value<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1));
    i.unified_memory = device_value<cl_bool>(d, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
    i.fp16 = has_extension(i.extensions, "cl_khr_fp16");
    const auto fp = device_value<cl_device_fp_config>(d, CL_DEVICE_SINGLE_FP_CONFIG);
    i.correctly_rounded_div_sqrt = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
    i.subgroup_size = query_subgroup_size(d, i);
    i.tensor_cores = has_extension(i.extensions, "cl_nv_device_attribute_query") &&
                     device_value<cl_uint>(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV) >= 8;
    i.vendor_id = device_value<cl_uint>(d, CL_DEVICE_VENDOR_ID);
    if (has_extension(i.extensions, "cl_khr_device_uuid"))
        i.has_uuid = clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, sizeof i.uuid, i.uuid, nullptr) == CL_SUCCESS;
    if (has_extension(i.extensions, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr pci{};
        if (clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) == CL_SUCCESS) {
            i.has_pci = true;
            i.pci_domain = pci.pci_domain;
            i.pci_bus = pci.pci_bus;
            i.pci_device = pci.pci_device;
            i.pci_function = pci.pci_function;
        }
    }
    return i;
}

// Host seconds of one execute + wait of a one-kernel executable on an idle
// device (launch_seconds_hint), medians of 200 with bench_op_estimates on
// 2026-11-24: PoCL's CPU device 28-31 us (2-core AMD EPYC VM), NVIDIA's
// OpenCL on an H100 30-53 us.
constexpr double kLaunchSecondsCpu = 30e-6;
constexpr double kLaunchSecondsGpu = 40e-6;

void copy_string(char* dst, size_t cap, const std::string& s) {
    const size_t n = std::min(cap - 1, s.size());
    std::memcpy(dst, s.data(), n);
    dst[n] = '\0';
}

// A GEMM tiling the device can run: 256 work-items (64x128 tiles; the
// fastest of the tilings tried for Q4_0/Q8_0 prefill on an H100) where
// allowed, else 128, else 16.
GemmConfig gemm_config_for(size_t max_wg) {
    if (max_wg >= 256) return GemmConfig{32, 8, 4, 8};
    if (max_wg >= 128) return GemmConfig{16, 8, 4, 8};
    return GemmConfig{4, 4, 4, 4};
}

}  // namespace

ClDevice::ClDevice(cl_platform_id platform, cl_device_id device)
    : info_(query_info(platform, device)), platform_(platform), device_(device), attention_programs_(std::make_unique<AttentionPrograms>()) {}

MmaMode mma_mode() {
    static const MmaMode mode = sdk::env_equals("HETERO_CL_MMA", "0")         ? MmaMode::Off
                                : sdk::env_equals("HETERO_CL_MMA", "emulate") ? MmaMode::Emulate
                                                                              : MmaMode::Auto;
    return mode;
}

const MmaTiling& mma_tiling() {
    static const MmaTiling tiling = [] {
        MmaTiling t;
        const char* e = std::getenv("HETERO_CL_MMA_WARPS");
        if (!e || !*e) return t;
        MmaTiling c;  // N,M alone keep the default fragments
        char end = 0;
        const int got = std::sscanf(e, "%d,%d,%d,%d%c", &c.warps_n, &c.warps_m, &c.frags_n, &c.frags_m, &end);
        auto pow2 = [](int v, int hi) { return v >= 1 && v <= hi && (v & (v - 1)) == 0; };
        // Every work-item stages 8 halves of x at a time and quarter blocks of
        // weights (so the tile must divide into the group evenly), a fragment
        // load fills two weight tiles, and the three K-step buffers of x and
        // two of weights (80 bytes a row) fit 48 KiB of local memory.
        const bool ok = (got == 2 || got == 4) && pow2(c.warps_n, 8) && pow2(c.warps_m, 8) && c.warps_n * c.warps_m <= 16 &&
                        pow2(c.frags_n, 8) && pow2(c.frags_m, 8) && c.frags_m >= 2 && c.frags_n * c.frags_m <= 16 &&
                        (c.tile_n() * 4) % int64_t(c.group()) == 0 && (c.tile_m() * 4) % int64_t(c.group()) == 0 &&
                        (3 * c.tile_n() + 2 * c.tile_m()) * 80 <= 48 * 1024;
        if (!ok) {
            std::fprintf(stderr,
                         "hetero opencl: HETERO_CL_MMA_WARPS=%s ignored (want N,M[,FN,FM]: powers of two, N*M <= 16 warps, FM >= 2, "
                         "FN*FM <= 16, tiles that divide over the group and fit 48 KiB of local memory)\n",
                         e);
            return t;
        }
        return c;
    }();
    return tiling;
}

bool mma_n_fastest() {
    static const bool on = [] {
        const char* e = std::getenv("HETERO_CL_MMA_ORDER");
        if (!e || !*e) return true;
        if (std::strcmp(e, "n") == 0 || std::strcmp(e, "m") == 0) return e[0] == 'n';
        std::fprintf(stderr, "hetero opencl: HETERO_CL_MMA_ORDER=%s ignored (want n or m)\n", e);
        return true;
    }();
    return on;
}

bool profiling_enabled() {
    static const bool on = sdk::env_equals("HETERO_CL_PROFILE", "1");
    return on;
}

void ClDevice::open_slow() const {
    std::lock_guard<std::mutex> lock(open_mutex_);
    if (opened_.load(std::memory_order_relaxed)) return;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform_), 0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &device_, nullptr, nullptr, &err);
    cl_check(err, "clCreateContext", HETERO_ERR_DEVICE_LOST);
    cl_command_queue queue = clCreateCommandQueue(context, device_, profiling_enabled() ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) {
        clReleaseContext(context);
        cl_check(err, "clCreateCommandQueue", HETERO_ERR_DEVICE_LOST);
    }
    context_ = context;
    queue_ = queue;
    buffer_pool_ = std::make_shared<BufferPool>(context);
    opened_.store(true, std::memory_order_release);
}

ClDevice::~ClDevice() {
    flag_slots_.close(queue_);
    if (queue_) {
        clFinish(queue_);
        clReleaseCommandQueue(queue_);
    }
    attention_programs_.reset();
    program_.reset();
    if (context_) clReleaseContext(context_);
}

void ClDevice::fill_props(hetero_device_props& p) const {
    if (info_.type & CL_DEVICE_TYPE_GPU) p.kind = HETERO_DEVICE_GPU;
    else if (info_.type & CL_DEVICE_TYPE_CPU) p.kind = HETERO_DEVICE_CPU;
    else if (info_.type & CL_DEVICE_TYPE_ACCELERATOR) p.kind = HETERO_DEVICE_NPU;
    else p.kind = HETERO_DEVICE_OTHER;
    p.flags = info_.unified_memory ? HETERO_DEVICE_FLAG_UNIFIED_MEMORY : 0u;
    copy_string(p.name, sizeof p.name, info_.name);
    std::string driver = info_.platform_name + " " + info_.platform_version + "; driver " + info_.driver_version;
    driver += info_.fp16 ? "; fp16" : "; no fp16";
    if (info_.subgroup_size) driver += "; subgroup " + std::to_string(info_.subgroup_size);
    copy_string(p.driver, sizeof p.driver, driver);
    p.memory_bytes = info_.global_mem;
    p.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32) | HETERO_DTYPE_BIT(HETERO_DTYPE_F16) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_BF16) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q8_0) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_0) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_K) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_K) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q6_K) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_1) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_0) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_1) | HETERO_DTYPE_BIT(HETERO_DTYPE_IQ4_NL) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_Q2_K) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q3_K) |
                   HETERO_DTYPE_BIT(HETERO_DTYPE_E0M4);
    // Hint: compute units x clock x per-vendor f32 FMA rate (not measured).
    p.peak_gflops = double(info_.compute_units) * double(info_.clock_mhz) * flops_per_cu_clock(info_) / 1000.0;
    // OpenCL reports no memory bandwidth (nor the memory clock and bus
    // width it follows from). A CPU device reads the host's DRAM: the hint
    // every host-CPU provider gives. Others stay unknown (0).
    p.peak_bandwidth_gbs = (info_.type & CL_DEVICE_TYPE_CPU) ? sdk::host_bandwidth_gbs_hint(int(info_.compute_units)) : 0.0;
    p.compute_units = info_.compute_units;
    p.subgroup_size = info_.subgroup_size;
    sdk::set_resource(p, resource());
    p.launch_seconds_hint = (info_.type & CL_DEVICE_TYPE_CPU) ? kLaunchSecondsCpu : kLaunchSecondsGpu;
}

GemmConfig ClDevice::gemm_config(const GemmConfig* gemm_override) const {
    return gemm_override && size_t(gemm_override->wg()) <= info_.max_wg ? *gemm_override : gemm_config_for(info_.max_wg);
}

bool ClDevice::plans_mma() const { return (info_.tensor_cores && mma_mode() == MmaMode::Auto) || mma_mode() == MmaMode::Emulate; }

std::string ClDevice::resource() const {
    if (info_.type & CL_DEVICE_TYPE_CPU) return sdk::kHostResource;
    const char* prefix = info_.type & CL_DEVICE_TYPE_GPU ? "gpu" : "device";
    std::string r = info_.has_uuid ? sdk::resource_from_uuid(info_.uuid, prefix) : std::string();
    if (r.empty() && info_.has_pci) r = sdk::resource_from_pci(info_.pci_domain, info_.pci_bus, info_.pci_device, info_.pci_function, prefix);
    if (r.empty()) r = sdk::resource_from_name(info_.vendor_id, info_.name, prefix);
    return r;
}

double ClDevice::compile_seconds_hint(const std::string& cache_dir, const GemmConfig* gemm_override) {
    // The first build program() tries (a fallback after a failed PTX build
    // is not foreseen).
    const bool ptx = info_.tensor_cores && mma_mode() == MmaMode::Auto;
    bool built = false, mma = plans_mma();
    {
        // program() holds the lock while it builds (a minute on PoCL): do
        // not wait for it. A build under way is counted as a whole build.
        std::unique_lock<std::mutex> lock(program_mutex_, std::try_to_lock);
        if (lock.owns_lock() && program_) {
            built = true;
            mma = program_->mma();
        }
    }
    const double base = built ? 0.0 : seconds_to_build(base_recipe(info_, gemm_config(gemm_override), mma, ptx), program_device_key(info_), cache_dir);
    if (!mma) return base;
    double attention = -1;
    for (const MmaAttentionKernel& k : kMmaAttentionKernels) {
        const double s = attention_programs_->seconds_until_ready(info_, k, ptx, cache_dir);
        attention = attention < 0 ? s : std::min(attention, s);
    }
    return base + attention;
}

const Program& ClDevice::program(const std::string& cache_dir, const GemmConfig* gemm_override) {
    std::lock_guard<std::mutex> lock(program_mutex_);
    if (program_) return *program_;
    GemmConfig gemm = gemm_config(gemm_override);
    const MmaMode mode = mma_mode();
    bool ptx = info_.tensor_cores && mode == MmaMode::Auto;
    for (;;) {
        const bool mma = ptx || mode == MmaMode::Emulate;
        std::unique_ptr<Program> prog;
        try {
            prog = build_program_from(base_recipe(info_, gemm, mma, ptx), context(), info_, device_, cache_dir, gemm, mma);
        } catch (const sdk::Error& e) {
            // A driver that rejects the inline PTX still gets the portable kernels.
            if (!ptx) throw;
            sdk::log(HETERO_LOG_WARN, "opencl", info_.name + ": inline-PTX kernels (tensor cores, warp shuffles) not built, using the portable ones: " + e.what());
            ptx = false;
            continue;
        }
        // The GEMM needs its whole tile's work-items in one group; shrink the
        // tiling when the compiled kernel allows fewer.
        if (prog->group_size("gemm_q4_0", size_t(gemm.wg())) >= size_t(gemm.wg()) || gemm.wg() <= 16) {
            program_ = std::move(prog);
            program_ptx_ = ptx;
            cache_dir_ = cache_dir;
            return *program_;
        }
        gemm = GemmConfig{4, 4, 4, 4};
    }
}

const Program* ClDevice::attention_program(const MmaAttentionKernel& kernel, int64_t head_dim) {
    bool ptx = false;
    {
        std::lock_guard<std::mutex> lock(program_mutex_);
        if (!program_ || !program_->mma())
            sdk::fail(HETERO_ERR_INTERNAL, std::string(kernel.name) + " asked for before a base program with the tensor-core kernels");
        ptx = program_ptx_;
    }
    return attention_programs_->get(AttentionPrograms::Target{context(), device_, info_, cache_dir_, ptx}, kernel, head_dim);
}

bool ClDevice::attention_program_usable(const MmaAttentionKernel& kernel) const { return !attention_programs_->failed(kernel); }

namespace {

const char* type_name(DeviceTypes t) {
    switch (t) {
        case DeviceTypes::Gpu: return "gpu";
        case DeviceTypes::Cpu: return "cpu";
        case DeviceTypes::Accelerator: return "accelerator";
        case DeviceTypes::All: break;
    }
    return "any";
}

cl_device_type cl_type(DeviceTypes t) {
    switch (t) {
        case DeviceTypes::Gpu: return CL_DEVICE_TYPE_GPU;
        case DeviceTypes::Cpu: return CL_DEVICE_TYPE_CPU;
        case DeviceTypes::Accelerator: return CL_DEVICE_TYPE_ACCELERATOR;
        case DeviceTypes::All: break;
    }
    return CL_DEVICE_TYPE_ALL;
}

// Every platform the ICD loader offers; throws when there is none, which is
// what a machine without an OpenCL driver looks like.
std::vector<cl_platform_id> platforms_or_fail() {
    cl_uint np = 0;
    const cl_int err = clGetPlatformIDs(0, nullptr, &np);
    if (err != CL_SUCCESS || np == 0)
        sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("no OpenCL platform: ") +
                                              (err != CL_SUCCESS ? std::string("clGetPlatformIDs failed: ") + cl_error_name(err) + " (" +
                                                                       std::to_string(err) + ")"
                                                                 : std::string("clGetPlatformIDs found none")) +
                                              "; is an OpenCL driver (ICD) installed?");
    std::vector<cl_platform_id> platforms(np);
    cl_check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs", HETERO_ERR_UNSUPPORTED);
    return platforms;
}

// The usable devices of one platform; why others were left out goes to `notes`.
void add_platform_devices(cl_platform_id p, cl_device_type want, std::vector<std::unique_ptr<ClDevice>>& out, std::string& notes) {
    const std::string pname = platform_string(p, CL_PLATFORM_NAME);
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, want, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) {
        notes += "; " + pname + ": no matching device";
        return;
    }
    std::vector<cl_device_id> devices(nd);
    if (clGetDeviceIDs(p, want, nd, devices.data(), nullptr) != CL_SUCCESS) {
        notes += "; " + pname + ": clGetDeviceIDs failed";
        return;
    }
    for (cl_device_id d : devices) {
        if (device_value<cl_bool>(d, CL_DEVICE_AVAILABLE) != CL_TRUE) {
            notes += "; " + device_string(d, CL_DEVICE_NAME) + ": not available";
            continue;
        }
        if (device_value<cl_bool>(d, CL_DEVICE_COMPILER_AVAILABLE) != CL_TRUE) {
            notes += "; " + device_string(d, CL_DEVICE_NAME) + ": no compiler";
            continue;
        }
        try {
            out.push_back(std::make_unique<ClDevice>(p, d));
        } catch (const std::exception& e) {
            sdk::log(HETERO_LOG_WARN, "opencl", std::string("skipping device: ") + e.what());
            notes += std::string("; ") + e.what();
        }
    }
}

}  // namespace

std::vector<std::unique_ptr<ClDevice>> enumerate_devices(DeviceTypes types, const std::string& platform_filter) {
    std::vector<std::unique_ptr<ClDevice>> out;
    std::string seen, notes;
    const std::string filter = lower(platform_filter);
    for (cl_platform_id p : platforms_or_fail()) {
        const std::string pname = platform_string(p, CL_PLATFORM_NAME);
        seen += (seen.empty() ? "" : ", ") + pname;
        if (!filter.empty() && lower(pname).find(filter) == std::string::npos) continue;
        add_platform_devices(p, cl_type(types), out, notes);
    }
    if (out.empty()) {
        std::string why = "no usable OpenCL device (type " + std::string(type_name(types));
        if (!filter.empty()) why += ", platform matching '" + platform_filter + "'";
        sdk::fail(HETERO_ERR_UNSUPPORTED, why + "; platforms: " + seen + notes + ")");
    }
    return out;
}

}  // namespace hetero::opencl
