// The OpenCL execution provider: every OpenCL 1.2+ device the ICD loader
// finds, with the provider's kernels built once per device and cached on disk.
// create() only checks the options; the devices are enumerated by the first
// call that needs one, since that makes the ICD loader load every driver
// (PoCL brings LLVM: about 75 ms here).
#include "cl_buffer.hpp"
#include "cl_device.hpp"
#include "cl_estimate.hpp"
#include "cl_executable.hpp"
#include "cl_util.hpp"
#include "program_cache.hpp"
#include "pinned_uploads.hpp"
#include "staged_writes.hpp"

#include <hetero/sdk/provider.hpp>

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>

namespace hetero::opencl {
namespace {

DeviceTypes parse_device_types(const sdk::Options& o) {
    auto it = o.find("device_types");
    if (it == o.end() || it->second == "all") return DeviceTypes::All;
    if (it->second == "gpu") return DeviceTypes::Gpu;
    if (it->second == "cpu") return DeviceTypes::Cpu;
    if (it->second == "accelerator") return DeviceTypes::Accelerator;
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT,
              "option 'device_types' must be one of all, gpu, cpu, accelerator; got '" + it->second + "'");
}

// "LX,LY,TM,TN": work-items along M and N, outputs per work-item along M and N.
std::optional<GemmConfig> parse_gemm_tiling(const sdk::Options& o) {
    auto it = o.find("gemm_tiling");
    if (it == o.end()) return std::nullopt;
    GemmConfig g;
    char tail = 0;
    const bool parsed = std::sscanf(it->second.c_str(), "%d,%d,%d,%d%c", &g.lx, &g.ly, &g.tm, &g.tn, &tail) == 4;
    if (!parsed || g.lx < 1 || g.ly < 1 || g.lx > 64 || g.ly > 64 || g.tm < 4 || g.tn < 4 || g.tm > 16 || g.tn > 16 ||
        g.tm % 4 || g.tn % 4)
        sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "option 'gemm_tiling' must be LX,LY,TM,TN (work-items 1..64, TM/TN 4, 8, 12 or 16), got '" +
                                                   it->second + "'");
    return g;
}

std::string option_or(const sdk::Options& o, const char* key, const std::string& fallback) {
    auto it = o.find(key);
    return it == o.end() ? fallback : it->second;
}

}  // namespace

class OpenclProvider final : public sdk::Provider {
public:
    explicit OpenclProvider(const sdk::Options& o) {
        sdk::require_known_options(o, {"device_types", "platform", "cache_dir", "gemm_tiling"}, "opencl");
        types_ = parse_device_types(o);
        platform_filter_ = option_or(o, "platform", "");
        gemm_tiling_ = parse_gemm_tiling(o);
        // cache_dir "off" (or empty) keeps programs in memory only.
        cache_dir_ = option_or(o, "cache_dir", default_cache_dir());
        if (cache_dir_ == "off") cache_dir_.clear();
    }

    uint32_t device_count() override { return uint32_t(devices().size()); }

    void device_props(uint32_t device, hetero_device_props& props) override {
        ClDevice& d = *devices()[device];
        d.fill_props(props);
        props.compile_seconds_hint = d.compile_seconds_hint(cache_dir_, gemm_override());
    }

    void check_supported(uint32_t device, const hetero_node& node, const hetero_tensor_desc* tensors, uint32_t,
                         double* est_seconds) override {
        if (node.op >= HETERO_OP_COUNT_1_3)
            sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("opencl: no kernel for op ") + std::to_string(node.op));
        // Kernels index within a row or head with 32-bit integers.
        auto dims_fit = [&](int32_t id) {
            const hetero_tensor_desc& t = tensors[id];
            for (uint32_t i = 0; i < t.ndim; ++i)
                if (t.shape[i] > INT_MAX) return false;
            return sdk::row_width(t) <= INT_MAX;
        };
        for (uint32_t i = 0; i < node.n_inputs; ++i)
            if (!dims_fit(node.inputs[i])) sdk::fail(HETERO_ERR_UNSUPPORTED, "a dimension exceeds 2^31-1");
        if (!dims_fit(node.output)) sdk::fail(HETERO_ERR_UNSUPPORTED, "a dimension exceeds 2^31-1");
        // Conversions: anything to f32, f32 to the float types, Q8_0 and Q4_0.
        // Other quantized weights are only read (matmul, embedding, to f32).
        if (node.op == HETERO_OP_CONVERT) {
            const uint32_t from = tensors[node.inputs[0]].dtype, to = tensors[node.output].dtype;
            const bool written = to == HETERO_DTYPE_F32 || to == HETERO_DTYPE_F16 || to == HETERO_DTYPE_BF16 || to == HETERO_DTYPE_Q8_0 ||
                                 to == HETERO_DTYPE_Q4_0;
            if (!written || (from != HETERO_DTYPE_F32 && to != HETERO_DTYPE_F32))
                sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("convert: ") + sdk::dtype_name(from) + " to " + sdk::dtype_name(to) +
                                                      " is not provided (only to f32, or from f32 to f16, bf16, q8_0, q4_0)");
        }
        if (node.op == HETERO_OP_ATTENTION || node.op == HETERO_OP_ATTENTION_EXT || node.op == HETERO_OP_ATTENTION_SEQS) {
            // Each work-item accumulates up to 8 head-dim slots (kernels/attention.cl).
            size_t wg = 1;
            while (wg * 2 <= std::min<size_t>(128, devices()[device]->info().max_wg)) wg *= 2;
            if (size_t(tensors[node.inputs[0]].shape[2]) > 8 * wg)
                sdk::fail(HETERO_ERR_UNSUPPORTED, "attention head dim above " + std::to_string(8 * wg) + " on this device");
        }
        if (est_seconds) {
            const ClDevice& d = *devices()[device];
            hetero_device_props props{};
            d.fill_props(props);
            *est_seconds = estimate_seconds(d, props, d.gemm_config(gemm_override()), d.plans_mma(), node, tensors);
        }
    }

    std::unique_ptr<sdk::Buffer> alloc(uint32_t device, uint64_t size) override {
        ClDevice& d = *devices()[device];
        if (d.info().max_alloc && size > d.info().max_alloc)
            sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "buffer of " + std::to_string(size) + " bytes exceeds the device's largest allocation (" +
                                                    std::to_string(d.info().max_alloc) + " bytes)");
        if (const BufferPool::Range r = d.buffer_pool()->take(size, d.info().max_alloc); r.mem)
            return std::make_unique<ClBuffer>(device, size, d.buffer_pool(), r);
        cl_int err = CL_SUCCESS;
        cl_mem mem = clCreateBuffer(d.context(), CL_MEM_READ_WRITE, size, nullptr, &err);
        cl_check(err, "clCreateBuffer", err == CL_INVALID_BUFFER_SIZE ? HETERO_ERR_OUT_OF_MEMORY : HETERO_ERR_INTERNAL);
        return std::make_unique<ClBuffer>(device, size, mem, nullptr);
    }

    std::unique_ptr<sdk::Buffer> import_host(uint32_t device, void* ptr, uint64_t size) override {
        const ClDevice& d = *devices()[device];
        // Only where device and host share memory is USE_HOST_PTR free of copies.
        if (!d.info().unified_memory) sdk::fail(HETERO_ERR_UNSUPPORTED, "device does not share memory with the host");
        cl_int err = CL_SUCCESS;
        cl_mem mem = clCreateBuffer(d.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, ptr, &err);
        cl_check(err, "clCreateBuffer(USE_HOST_PTR)", HETERO_ERR_UNSUPPORTED);
        return std::make_unique<ClBuffer>(device, size, mem, ptr);
    }

    // Imported memory is the host's own; device allocations are not mapped.
    void* host_ptr(sdk::Buffer& b) override { return static_cast<ClBuffer&>(b).host(); }

    void write(sdk::Buffer& dst, uint64_t offset, const void* src, uint64_t size) override {
        static_cast<ClBuffer&>(dst).forget_planar(offset, size);
        // Imported host memory must hold the bytes when this returns.
        if (size <= StagedWrites::kMaxBytes && !static_cast<ClBuffer&>(dst).host())
            return staged_writes_.write(queue_of(dst), cl_buffer(&dst).mem(), cl_buffer(&dst).base() + offset, src, size);
        const ClDevice& d = *devices()[dst.device()];
        if (size >= PinnedUploads::kMinBytes && !static_cast<ClBuffer&>(dst).host() && !d.info().unified_memory && pinned_enabled() &&
            pinned_uploads(dst.device()).write(d.context(), d.queue(), cl_buffer(&dst).mem(), cl_buffer(&dst).base() + offset, src, size))
            return;
        cl_check(clEnqueueWriteBuffer(queue_of(dst), cl_buffer(&dst).mem(), CL_TRUE, cl_buffer(&dst).base() + offset, size, src, 0, nullptr,
                                      nullptr),
                 "buffer_write", HETERO_ERR_DEVICE_LOST);
    }

    void read(sdk::Buffer& src, uint64_t offset, void* dst, uint64_t size) override {
        auto& b = static_cast<ClBuffer&>(src);
        if (!b.planar_regions_overlapping(offset, size).empty()) {
            ClDevice& d = *devices()[src.device()];
            return read_gguf(b, d.context(), d.queue(), d.program(cache_dir_, gemm_override()).get(), offset, dst, size);
        }
        cl_check(clEnqueueReadBuffer(queue_of(src), b.mem(), CL_TRUE, b.base() + offset, size, dst, 0, nullptr, nullptr),
                 "buffer_read", HETERO_ERR_DEVICE_LOST);
    }

    void copy(sdk::Buffer& src, uint64_t so, sdk::Buffer& dst, uint64_t d, uint64_t size) override {
        static_cast<ClBuffer&>(dst).forget_planar(d, size);
        if (src.device() != dst.device() || (&src == &dst && so < d + size && d < so + size) ||
            !static_cast<ClBuffer&>(src).planar_regions_overlapping(so, size).empty()) {
            // Across devices (separate contexts), overlapping, or from weights
            // in the planar layout (read back as GGUF bytes): stage on the host.
            std::vector<unsigned char> tmp(size);
            read(src, so, tmp.data(), size);
            write(dst, d, tmp.data(), size);
            return;
        }
        cl_command_queue q = queue_of(dst);
        const ClBuffer &from = cl_buffer(&src), &to = cl_buffer(&dst);
        cl_check(clEnqueueCopyBuffer(q, from.mem(), to.mem(), from.base() + so, to.base() + d, size, 0, nullptr, nullptr), "buffer_copy",
                 HETERO_ERR_DEVICE_LOST);
        cl_check(clFinish(q), "buffer_copy (finish)", HETERO_ERR_DEVICE_LOST);
    }

    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph,
                                             const std::vector<sdk::BoundTensor>& constants) override {
        ClDevice& d = *devices()[device];
        const Program& program = d.program(cache_dir_, gemm_override());
        return std::make_unique<ClExecutable>(device, d, program, std::move(graph), constants);
    }

    std::unique_ptr<sdk::Event> execute(sdk::Executable& exe, const std::vector<sdk::BoundTensor>& bound,
                                        bool want_event) override {
        return static_cast<ClExecutable&>(exe).run(bound, want_event);
    }

private:
    // The devices, enumerated once by the first caller (thread-safe); throws
    // the reason when there are none.
    const std::vector<std::unique_ptr<ClDevice>>& devices() {
        discovery_.run([this] { devices_ = enumerate_devices(types_, platform_filter_); });
        return devices_;
    }

    cl_command_queue queue_of(const sdk::Buffer& b) { return devices()[b.device()]->queue(); }
    // HETERO_CL_PINNED=0 writes straight from the caller's pages (for A/B timing).
    static bool pinned_enabled() {
        static const bool on = [] {
            const char* e = std::getenv("HETERO_CL_PINNED");
            return !(e && std::string(e) == "0");
        }();
        return on;
    }
    PinnedUploads& pinned_uploads(uint32_t device) {
        std::lock_guard<std::mutex> lock(pinned_mutex_);
        if (pinned_.size() <= device) pinned_.resize(device + 1);
        if (!pinned_[device]) pinned_[device] = std::make_unique<PinnedUploads>();
        return *pinned_[device];
    }
    const GemmConfig* gemm_override() const { return gemm_tiling_ ? &*gemm_tiling_ : nullptr; }

    DeviceTypes types_ = DeviceTypes::All;
    std::string platform_filter_;
    std::string cache_dir_;
    std::optional<GemmConfig> gemm_tiling_;
    sdk::DiscoverOnce discovery_;
    std::vector<std::unique_ptr<ClDevice>> devices_;  // written once, by discovery_
    StagedWrites staged_writes_;  // after devices_: its copies land before the queues go
    std::mutex pinned_mutex_;
    std::vector<std::unique_ptr<PinnedUploads>> pinned_;  // per device; after devices_, as staged_writes_
};

}  // namespace hetero::opencl

HETERO_SDK_EXPORT_PROVIDER(hetero::opencl::OpenclProvider, "opencl", "0.1.0", nullptr)
