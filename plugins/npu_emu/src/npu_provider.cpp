// The NPU-emulation provider: one device that computes as a mobile NPU does
// (static-shape graphs built once per shape and cached, W8A8 int8 matmuls,
// unified memory under a map limit) and reports, per execute, the time the
// NPU of a SoC profile would take. Its times are simulated; its results are
// exact functions of the inputs (npu_quant.hpp).
#include "npu_graph_cache.hpp"
#include "npu_outliers.hpp"
#include "npu_profile.hpp"
#include "npu_quant.hpp"
#include "npu_timing.hpp"

#include <hetero/sdk/device_resource.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/host_memory.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

namespace hetero::npu {
namespace {

using sdk::fail;

// Counters for tests and diagnostics (hetero_npu_emu_stats below).
std::atomic<uint64_t> g_compiles{0}, g_memory_hits{0}, g_disk_hits{0};
std::atomic<uint64_t> g_modelled_compile_us{0};
// Shadow outlier execution: matmuls run with a calibrated threshold, those
// without a calibration, and outlier channels sent to the CPU.
std::atomic<uint64_t> g_shadow_matmuls{0}, g_uncalibrated_matmuls{0}, g_outlier_channels{0};

// How activations are quantised. shadow: calibrated threshold + float
// outliers on the CPU (per-tensor max scale where no calibration exists);
// off: per-tensor max scale; calibrate: float matmuls that record channel
// ranges for later shadow runs.
enum class OutlierMode { shadow, off, calibrate };

std::string plugin_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&plugin_dir), &info) && info.dli_fname)
        return std::filesystem::path(info.dli_fname).parent_path().string();
    return "";
}

// What the NPU has mapped: buffers, imports and its int8 weight copies.
class MapBudget {
public:
    explicit MapBudget(uint64_t limit, std::string profile) : limit_(limit), profile_(std::move(profile)) {}
    void take(uint64_t bytes, const char* what) {
        uint64_t now = mapped_.load();
        do {
            if (now + bytes > limit_)
                fail(HETERO_ERR_OUT_OF_MEMORY, "npu_emu: mapping " + std::to_string(bytes) + " bytes (" + what + ") would exceed the NPU's map limit: " +
                                                   std::to_string(now) + " of " + std::to_string(limit_) + " bytes mapped (profile " + profile_ +
                                                   "; option map_limit)");
        } while (!mapped_.compare_exchange_weak(now, now + bytes));
    }
    void give(uint64_t bytes) { mapped_ -= bytes; }

private:
    uint64_t limit_;
    std::string profile_;
    std::atomic<uint64_t> mapped_{0};
};

class NpuBuffer final : public sdk::HostBuffer {
public:
    NpuBuffer(MapBudget& b, uint32_t device, uint64_t size) : HostBuffer(device, size), budget_(b) {}
    NpuBuffer(MapBudget& b, uint32_t device, void* p, uint64_t size) : HostBuffer(device, p, size), budget_(b) {}
    ~NpuBuffer() override { budget_.give(size()); }

private:
    MapBudget& budget_;
};

class NpuExecutable final : public sdk::HostExecutable {
public:
    NpuExecutable(MapBudget& b, uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants)
        : HostExecutable(device, std::move(graph), constants), budget_(b) {}
    ~NpuExecutable() override {
        for (size_t i = 0; i < ranges.size(); ++i) save_ranges(ranges_dir, weight_keys[i], ranges[i]);
        budget_.give(weight_bytes);
    }
    std::vector<Int8Weights> weights;  // per node (empty for f16 matmuls)
    std::vector<double> node_seconds;  // modelled, per node
    std::vector<std::unique_ptr<ShadowWeights>> shadow;  // per node; null = no shadow outliers
    std::vector<uint64_t> weight_keys;                   // per node: the weight tensor's bytes, hashed (0 with outliers=off)
    std::vector<ChannelRanges> ranges;                   // calibrate mode: per node
    std::string ranges_dir;                              // calibrate mode: saved there when released
    std::mutex ranges_mu;
    uint64_t weight_bytes = 0;
    uint64_t key = 0;
    double compile_modelled = 0;

private:
    MapBudget& budget_;
};

class NpuEvent final : public sdk::Event {
public:
    explicit NpuEvent(double s) : seconds_(s) {}
    void wait() override {}
    double device_seconds(bool& simulated) const override {
        simulated = true;
        return seconds_;
    }

private:
    double seconds_;
};

void copy_text(char (&dst)[128], const std::string& s) { std::snprintf(dst, sizeof dst, "%s", s.c_str()); }

class NpuProvider final : public sdk::HostMemoryProvider {
public:
    explicit NpuProvider(const sdk::Options& o)
        : profile_(load(o)), limit_(uint64_t(sdk::option_int(o, "map_limit", int64_t(profile_.map_limit_bytes), 1, INT64_MAX))),
          budget_(limit_, profile_.id), cache_(cache_dir(o)), outliers_(outlier_mode(o)),
          quantile_(sdk::option_double(o, "outlier_quantile", 0.99, 0.0, 1.0)),
          chunk_tokens_(sdk::option_int(o, "chunk", profile_.default_chunk_tokens, 0, 1 << 20)) {
        if (outliers_ == OutlierMode::calibrate && cache_.dir().empty())
            sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: outliers=calibrate records its calibration in cache_dir, which is none");
        if (outliers_ == OutlierMode::shadow && profile_.cpu_fp32_gflops <= 0)
            sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: profile " + profile_.id + " has no units.cpu section for shadow outliers; use outliers=off");
    }

    uint32_t device_count() override { return 1; }

    void device_props(uint32_t, hetero_device_props& p) override {
        p.kind = HETERO_DEVICE_NPU;
        p.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY | HETERO_DEVICE_FLAG_STATIC_SHAPES | HETERO_DEVICE_FLAG_SIMULATED_TIME;
        copy_text(p.name, "npu_emu (" + profile_.id + " NPU, simulated)");
        copy_text(p.driver, "hetero npu_emu 0.1.0, profile " + profile_.id + ", W8A8 per-tensor activations, simulated times");
        p.memory_bytes = limit_;
        // Bit I8: matmuls compute in int8 (the conformance kit's W8A8 bound).
        p.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32) | HETERO_DTYPE_BIT(HETERO_DTYPE_F16) | HETERO_DTYPE_BIT(HETERO_DTYPE_BF16) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_Q8_0) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_0) | HETERO_DTYPE_BIT(HETERO_DTYPE_I8);
        p.peak_gflops = profile_.int8_gops;  // int8 operations per second (the NPU has almost no f32)
        p.peak_bandwidth_gbs = profile_.bandwidth_gbs;
        p.compute_units = 1;
        sdk::set_resource(p, "device:npu_emu");
        // A run alternates the layers' graphs: every execute also switches graphs.
        p.launch_seconds_hint = (profile_.launch_us + profile_.graph_switch_us) * 1e-6;
        // One layer's graphs at the default chunk, 7 matmuls of 4096 x 4096.
        p.compile_seconds_hint = 7 * compile_seconds(profile_, 2.0 * double(profile_.default_chunk_tokens) * 4096.0 * 4096.0 / 1e6);
        p.chunk_tokens = uint32_t(chunk_tokens_);
    }

    void check_supported(uint32_t, const hetero_node& node, const hetero_tensor_desc* t, uint32_t, double* est) override {
        const std::string op = profile_op(node, t);
        if (node.op != HETERO_OP_MATMUL) {
            if (profile_.runs(op))
                fail(HETERO_ERR_UNSUPPORTED, "npu_emu: " + op + " is an NPU op of profile " + profile_.id + ", but this emulator runs matmuls only");
            fail(HETERO_ERR_UNSUPPORTED, "npu_emu: " + op + " is not among the NPU ops of profile " + profile_.id + " (it runs on another device)");
        }
        if (!profile_.runs(op)) fail(HETERO_ERR_UNSUPPORTED, "npu_emu: " + op + " is not among the NPU ops of profile " + profile_.id);
        if (t[node.inputs[1]].kind != HETERO_TENSOR_CONSTANT)
            fail(HETERO_ERR_UNSUPPORTED, "npu_emu: matmul weights must be constants (an NPU graph is built with its weights)");
        if (est) *est = matmul_seconds(profile_, node, t);
    }

    std::unique_ptr<sdk::Buffer> alloc(uint32_t device, uint64_t size) override {
        budget_.take(size, "a buffer");
        return std::make_unique<NpuBuffer>(budget_, device, size);
    }
    std::unique_ptr<sdk::Buffer> import_host(uint32_t device, void* ptr, uint64_t size) override {
        budget_.take(size, "imported host memory");
        return std::make_unique<NpuBuffer>(budget_, device, ptr, size);
    }

    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants) override {
        for (const hetero_node& n : graph.nodes) check_supported(device, n, graph.tensors.data(), uint32_t(graph.tensors.size()), nullptr);
        auto exe = std::make_unique<NpuExecutable>(budget_, device, std::move(graph), constants);
        const auto& tensors = exe->graph().tensors;
        // A graph is its structure: ops, shapes, dtypes. Weights are bound to
        // it at execute (as graph inputs), so the layers' equal graphs are
        // one graph, built once and shared across chunks and layers
        // (llm.npu §3.2's chunk-sharing graph).
        uint64_t key = sdk::kFnvOffset;
        for (const hetero_tensor_desc& d : tensors) {
            key = fnv1a(&d.dtype, sizeof d.dtype, key);
            key = fnv1a(&d.kind, sizeof d.kind, key);
            key = fnv1a(d.shape, sizeof(int64_t) * d.ndim, key);
        }
        for (const hetero_node& n : exe->graph().nodes) key = fnv1a(&n, sizeof n, key);
        exe->key = key;
        for (const hetero_node& n : exe->graph().nodes) {
            const hetero_tensor_desc& w = tensors[size_t(n.inputs[1])];
            const uint8_t* wdata = sdk::host_data(constants[size_t(n.inputs[1])]);
            exe->node_seconds.push_back(matmul_seconds(profile_, n, tensors.data()));
            // Calibrations are filed under the weight's bytes; hashing them is
            // only worth it when outliers are recorded or used.
            exe->weight_keys.push_back(outliers_ == OutlierMode::off ? 0 : weight_key(w, wdata));
            exe->shadow.emplace_back();
            if (runs_w8a8(w.dtype)) {
                exe->weights.push_back(quantize_weights(w, wdata, profile_.weight_per_tensor));
                const uint64_t bytes = uint64_t(exe->weights.back().q.size()) + exe->weights.back().scale.size() * 4;
                budget_.take(bytes, "int8 weights");
                exe->weight_bytes += bytes;
                if (outliers_ == OutlierMode::shadow) attach_shadow(*exe, w, wdata);
            } else {
                exe->weights.emplace_back();
            }
        }
        if (outliers_ == OutlierMode::calibrate) {
            exe->ranges.resize(exe->graph().nodes.size());
            exe->ranges_dir = cache_.dir();
        }
        const CacheHit hit = cache_.prepare(key, profile_.id);
        if (hit == CacheHit::none) {
            exe->compile_modelled = compile_seconds(profile_, graph_mflop(exe->graph().view()));
            g_compiles += 1;
            g_modelled_compile_us += uint64_t(exe->compile_modelled * 1e6);
        } else {
            (hit == CacheHit::memory ? g_memory_hits : g_disk_hits) += 1;
        }
        sdk::log(HETERO_LOG_DEBUG, "npu_emu",
                 hit == CacheHit::none ? "graph built (modelled " + std::to_string(exe->compile_modelled * 1e3) + " ms)"
                                       : std::string("graph cache hit (") + (hit == CacheHit::memory ? "memory" : "disk") + ")");
        return exe;
    }

    std::unique_ptr<sdk::Event> execute(sdk::Executable& e, const std::vector<sdk::BoundTensor>& bound, bool) override {
        auto& x = static_cast<NpuExecutable&>(e);
        const std::vector<uint8_t*>& ptrs = x.pointers(bound);
        const auto& tensors = x.graph().tensors;
        double seconds = profile_.launch_us * 1e-6;
        // Another graph, or the same graph with another layer's weights bound.
        if (last_exe_.exchange(&x) != &x) seconds += profile_.graph_switch_us * 1e-6;
        for (size_t i = 0; i < x.graph().nodes.size(); ++i) {
            const hetero_node& n = x.graph().nodes[i];
            const hetero_tensor_desc& xd = tensors[size_t(n.inputs[0])];
            const hetero_tensor_desc& wd = tensors[size_t(n.inputs[1])];
            const int64_t rows = xd.shape[0], k = sdk::row_width(xd), m = wd.shape[0];
            const float* in = reinterpret_cast<const float*>(ptrs[size_t(n.inputs[0])]);
            float* out = reinterpret_cast<float*>(ptrs[size_t(n.output)]);
            double node_seconds = x.node_seconds[i];
            if (outliers_ == OutlierMode::calibrate) {
                matmul_f32(in, rows, wd, ptrs[size_t(n.inputs[1])], out);
                std::lock_guard<std::mutex> lock(x.ranges_mu);
                x.ranges[i].observe(in, rows, k);
            } else if (x.shadow[i]) {
                std::vector<int8_t> qx;
                const ShadowResult r = matmul_shadow(in, rows, x.weights[i], *x.shadow[i], qx, out);
                g_outlier_channels += uint64_t(r.outlier_channels);
                if (r.outlier_channels > 0) {
                    // The CPU's share runs beside the NPU's; the sum waits for both.
                    const double cpu = profile_.cpu_launch_us * 1e-6 + 2.0 * double(rows * r.outlier_channels * m) / (profile_.cpu_fp32_gflops * 1e9) +
                                       double(r.outlier_channels * m * 4) / (profile_.cpu_bandwidth_gbs * 1e9);
                    node_seconds = std::max(node_seconds, cpu) + profile_.sync_us * 1e-6;
                }
            } else if (runs_w8a8(wd.dtype)) {
                std::vector<int8_t> qx(size_t(rows * k));
                const float sx = quantize_activations(in, rows * k, qx.data());
                matmul_w8a8(qx.data(), sx, rows, x.weights[i], out);
            } else {
                matmul_f16(in, rows, k, wd, ptrs[size_t(n.inputs[1])], m, out);
            }
            seconds += node_seconds;
        }
        return std::make_unique<NpuEvent>(seconds);
    }

private:
    static uint64_t weight_key(const hetero_tensor_desc& w, const uint8_t* data) {
        const uint64_t h = fnv1a(w.shape, sizeof(int64_t) * w.ndim, fnv1a(&w.dtype, sizeof w.dtype));
        return fnv1a(data, sdk::tensor_bytes(w), h);
    }

    // Shadow outliers for one int8 matmul, from the weight's calibration.
    void attach_shadow(NpuExecutable& exe, const hetero_tensor_desc& w, const uint8_t* wdata) {
        std::string warning;
        const std::optional<ChannelRanges> r = load_ranges(cache_.dir(), exe.weight_keys.back(), sdk::row_width(w), warning);
        if (!warning.empty()) sdk::log(HETERO_LOG_WARN, "npu_emu", warning);
        if (!r) {
            g_uncalibrated_matmuls += 1;
            if (!warned_uncalibrated_.exchange(true))
                sdk::log(HETERO_LOG_WARN, "npu_emu",
                         "no outlier calibration for this model's weights: per-tensor activation scales without shadow outliers "
                         "(hetero calibrate -m MODEL records one)");
            return;
        }
        g_shadow_matmuls += 1;
        auto sw = std::make_unique<ShadowWeights>(w, wdata, outlier_threshold(*r, quantile_), *r);
        const uint64_t bytes = sw->bytes();
        budget_.take(bytes, "float weights of hot outlier channels");
        exe.weight_bytes += bytes;
        exe.shadow.back() = std::move(sw);
    }

    static OutlierMode outlier_mode(const sdk::Options& o) {
        const auto it = o.find("outliers");
        if (it == o.end() || it->second == "shadow") return OutlierMode::shadow;
        if (it->second == "off") return OutlierMode::off;
        if (it->second == "calibrate") return OutlierMode::calibrate;
        sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: option 'outliers' must be shadow, off or calibrate, got '" + it->second + "'");
    }

    static NpuProfile load(const sdk::Options& o) {
        sdk::require_known_options(o, {"profile", "map_limit", "cache_dir", "outliers", "outlier_quantile", "chunk"}, "npu_emu");
        const auto it = o.find("profile");
        return load_npu_profile(it == o.end() ? "snapdragon-8-gen-3" : it->second, plugin_dir());
    }
    static std::string cache_dir(const sdk::Options& o) {
        const auto it = o.find("cache_dir");
        if (it == o.end()) return default_cache_dir();
        return it->second == "none" ? std::string() : it->second;
    }

    // f16 matmul: x rounded to f16, weights as stored (f16/bf16 are exact in
    // f32), products accumulated in f32 in k order.
    static void matmul_f16(const float* x, int64_t rows, int64_t k, const hetero_tensor_desc& wd, const uint8_t* w, int64_t m, float* y) {
        std::vector<float> xr(static_cast<size_t>(k)), wr(static_cast<size_t>(k));
        const uint64_t row_bytes = sdk::row_bytes(wd.dtype, k);
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t c = 0; c < k; ++c) xr[size_t(c)] = sdk::f16_to_f32(sdk::f32_to_f16(x[i * k + c]));
            for (int64_t r = 0; r < m; ++r) {
                sdk::row_to_f32(wd.dtype, w + uint64_t(r) * row_bytes, wr.data(), k);
                float acc = 0.0f;
                for (int64_t c = 0; c < k; ++c) acc += xr[size_t(c)] * wr[size_t(c)];
                y[i * m + r] = acc;
            }
        }
    }

    NpuProfile profile_;
    uint64_t limit_;
    MapBudget budget_;
    GraphCache cache_;
    OutlierMode outliers_;
    double quantile_;
    int64_t chunk_tokens_;
    std::atomic<bool> warned_uncalibrated_{false};
    std::atomic<const NpuExecutable*> last_exe_{nullptr};
};

// Runs on any CPU (plain C++).
const char* probe() { return nullptr; }

}  // namespace
}  // namespace hetero::npu

// Counters of graph builds and cache hits since the plugin was loaded, and
// the modelled seconds of the builds: for tests and diagnostics.
extern "C" HETERO_EP_EXPORT void hetero_npu_emu_stats(uint64_t* compiles, uint64_t* memory_hits, uint64_t* disk_hits, double* modelled_compile_seconds) {
    if (compiles) *compiles = hetero::npu::g_compiles.load();
    if (memory_hits) *memory_hits = hetero::npu::g_memory_hits.load();
    if (disk_hits) *disk_hits = hetero::npu::g_disk_hits.load();
    if (modelled_compile_seconds) *modelled_compile_seconds = double(hetero::npu::g_modelled_compile_us.load()) / 1e6;
}

// Shadow outlier counters since the plugin was loaded: int8 matmuls built
// with a calibrated threshold, those built without one, and outlier
// channels sent to the CPU over all executes.
extern "C" HETERO_EP_EXPORT void hetero_npu_emu_outlier_stats(uint64_t* shadow_matmuls, uint64_t* uncalibrated_matmuls, uint64_t* outlier_channels) {
    if (shadow_matmuls) *shadow_matmuls = hetero::npu::g_shadow_matmuls.load();
    if (uncalibrated_matmuls) *uncalibrated_matmuls = hetero::npu::g_uncalibrated_matmuls.load();
    if (outlier_channels) *outlier_channels = hetero::npu::g_outlier_channels.load();
}

HETERO_SDK_EXPORT_PROVIDER(hetero::npu::NpuProvider, "npu_emu", "0.1.0", hetero::npu::probe)
