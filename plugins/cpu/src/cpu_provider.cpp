// The CPU execution provider: one device (the host CPU), host buffers with
// zero-copy import, graphs executed node by node on a persistent thread pool
// with kernels chosen for the CPU at instance creation.
#include "cpu_estimate.hpp"
#include "cpu_info.hpp"
#include "kernels.hpp"
#include "ops.hpp"
#include "packed_weights.hpp"
#include "thread_pool.hpp"

#include <hetero/sdk/device_resource.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/host_cpu.hpp>
#include <hetero/sdk/host_memory.hpp>
#include <hetero/sdk/provider.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace hetero::cpu {
namespace {

using sdk::fail;

class CpuExecutable final : public sdk::HostExecutable {
public:
    using HostExecutable::HostExecutable;
    Scratch scratch;
    std::vector<std::shared_ptr<const PackedWeights>> packed_owners;
    std::vector<const uint8_t*> packed;  // per tensor id, or empty when nothing is packed
};

void copy_text(char (&dst)[128], const std::string& src) {
    std::snprintf(dst, sizeof(dst), "%s", src.c_str());
}

// Automatic decode settings on Intel CPUs: four streams, no software
// prefetch (Emerald Rapids Xeon, 1.1B tg64 on 16 threads, two rounds: Q4_0
// 126 tok/s against 99-101 with one non-temporal stream, Q8_0 78-82
// against 71; BENCHMARKS.md, plugins/cpu/README.md).
constexpr int kIntelDecodeStreams = 4;
constexpr StreamPrefetch kIntelDecodePrefetch = StreamPrefetch::kNone;

class CpuProvider final : public sdk::HostMemoryProvider {
public:
    explicit CpuProvider(const sdk::Options& options)
        : threads_(init_threads(options)), kernels_(select_kernels(isa_option(options))), pool_(threads_),
          pack_weights_(sdk::option_int(options, "pack_weights", 1, 0, 1) != 0) {
        kernels_.llama_act_grids = sdk::option_int(options, "llama_act_grids", 1, 0, 1) != 0;
        kernels_.decode_streams = decode_streams_option(options);
        kernels_.stream_prefetch = decode_prefetch_option(options);
        kernels_.attention_chunk = sdk::option_int(options, "attention_chunk", 0, 0, int64_t(1) << 30);
        model_ = cpu_model_name();
        const double ghz = sdk::host_cpu_mhz() / 1000.0;
        peak_gflops_ = flops_per_cycle(kernels_) * ghz * threads_;
        bandwidth_gbs_ = sdk::host_bandwidth_gbs_hint(threads_);
        sdk::log(HETERO_LOG_INFO, "cpu", "using " + std::string(kernels_.name) + " kernels on " + std::to_string(threads_) + " threads");
    }

    uint32_t device_count() override { return 1; }

    void device_props(uint32_t, hetero_device_props& p) override {
        p.kind = HETERO_DEVICE_CPU;
        p.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;
        copy_text(p.name, model_);
        copy_text(p.driver, std::string("hetero cpu 0.1.0, ") + kernels_.name + " kernels (peak/bandwidth are hints)");
        p.memory_bytes = physical_memory_bytes();
        p.dtype_mask = matmul_dtype_mask(kernels_);  // the kernel table's rows
        p.peak_gflops = peak_gflops_;
        p.peak_bandwidth_gbs = bandwidth_gbs_;
        p.compute_units = uint32_t(threads_);
        p.subgroup_size = 0;
        sdk::set_resource(p, sdk::kHostResource);
        p.launch_seconds_hint = kLaunchSeconds;
        p.compile_seconds_hint = 0;  // nothing is built; packing weights is per executable, milliseconds
    }

    void check_supported(uint32_t, const hetero_node& node, const hetero_tensor_desc* tensors, uint32_t,
                         double* est_seconds) override {
        // Every well-formed node of the ABI 1.3 op set runs here.
        if (node.op < HETERO_OP_EMBEDDING || node.op >= HETERO_OP_COUNT_1_3)
            fail(HETERO_ERR_UNSUPPORTED, "cpu: op " + std::to_string(node.op) + " is not in the op set this provider knows");
        if (est_seconds) *est_seconds = estimate_seconds(kernels_, pack_weights_, peak_gflops_, bandwidth_gbs_, node, tensors);
    }

    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants) override {
        auto exe = std::make_unique<CpuExecutable>(device, std::move(graph), constants);
        if (pack_weights_) pack_constant_weights(*exe, constants);
        return exe;
    }

    std::unique_ptr<sdk::Event> execute(sdk::Executable& exe, const std::vector<sdk::BoundTensor>& bound, bool) override {
        auto& x = static_cast<CpuExecutable&>(exe);
        const std::vector<uint8_t*>& ptrs = x.pointers(bound);
        const NodeTensors tensors{x.graph().tensors.data(), ptrs.data()};
        const OpContext ctx{kernels_, pool_, x.scratch, x.packed.empty() ? nullptr : x.packed.data()};
        for (const hetero_node& node : x.graph().nodes) run_node(ctx, node, tensors);
        return nullptr;  // synchronous: done on return
    }

private:
    // Packed decode's side-by-side weight streams (kernels.hpp). Automatic:
    // kIntelDecodeStreams on Intel CPUs, elsewhere by row width in
    // ops_matmul.cpp.
    static int decode_streams_option(const sdk::Options& options) {
        const int64_t v = sdk::option_int(options, "decode_streams", 0, 0, 4);
        if (v == 3) sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "option 'decode_streams' must be 0 (auto), 1, 2 or 4, got '3'");
        return v != 0 ? int(v) : cpu_is_intel() ? kIntelDecodeStreams : 0;
    }

    // How packed decode asks for its weight streams ahead (kernels.hpp).
    // Automatic: non-temporally (measured best on AMD Zen 5) except on
    // Intel CPUs, where prefetchnta held one core to 5 GB/s from DRAM
    // against 14-17 GB/s with the hardware prefetchers alone (Emerald
    // Rapids, plugins/cpu/README.md).
    static StreamPrefetch decode_prefetch_option(const sdk::Options& options) {
        const auto it = options.find("decode_prefetch");
        const std::string v = it == options.end() ? "auto" : it->second;
        if (v == "auto") return cpu_is_intel() ? kIntelDecodePrefetch : StreamPrefetch::kNonTemporal;
        if (v == "none") return StreamPrefetch::kNone;
        if (v == "l1") return StreamPrefetch::kL1;
        if (v == "l2") return StreamPrefetch::kL2;
        if (v == "nta") return StreamPrefetch::kNonTemporal;
        sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "option 'decode_prefetch' must be auto, none, l1, l2 or nta, got '" + v + "'");
    }

    static int init_threads(const sdk::Options& options) {
        sdk::require_known_options(options, {"threads", "isa", "pack_weights", "llama_act_grids", "decode_streams", "decode_prefetch",
                                                "attention_chunk"},
                                   "cpu");
        return int(sdk::option_int(options, "threads", sdk::host_cores(), 1, 1024));
    }

    // Repacks the constant Q4_0/Q8_0/Q5_0/IQ4_NL/Q4_K/Q6_K weights of matmuls for the packed
    // kernels when this ISA has them (cuts the per-block work several times).
    void pack_constant_weights(CpuExecutable& exe, const std::vector<sdk::BoundTensor>& constants) {
        const auto& tensors = exe.graph().tensors;
        for (const hetero_node& node : exe.graph().nodes) {
            if (node.op != HETERO_OP_MATMUL) continue;
            const int32_t w = node.inputs[1];
            const hetero_tensor_desc& wd = tensors[size_t(w)];
            if (wd.kind != HETERO_TENSOR_CONSTANT) continue;
            if (!packed_matmul_fn(kernels_, wd.dtype) || (!exe.packed.empty() && exe.packed[size_t(w)])) continue;
            auto packed = packed_cache_.get(sdk::host_data(constants[size_t(w)]), wd.dtype, wd.shape[0], sdk::row_width(wd), pool_);
            if (!packed) continue;
            if (exe.packed.empty()) exe.packed.assign(tensors.size(), nullptr);
            exe.packed[size_t(w)] = packed->data.data();
            exe.packed_owners.push_back(std::move(packed));
        }
    }
    static std::string isa_option(const sdk::Options& options) {
        const auto it = options.find("isa");
        return it == options.end() ? "auto" : it->second;
    }

    int threads_;
    Kernels kernels_;  // the selected table, with this provider's options applied
    ThreadPool pool_;
    bool pack_weights_;
    PackedWeightCache packed_cache_;
    std::string model_;
    double peak_gflops_ = 0.0;
    double bandwidth_gbs_ = 0.0;
};

// Every CPU the build targets can run at least the scalar kernels.
const char* probe() { return nullptr; }

}  // namespace
}  // namespace hetero::cpu

HETERO_SDK_EXPORT_PROVIDER(hetero::cpu::CpuProvider, "cpu", "0.1.0", hetero::cpu::probe)
