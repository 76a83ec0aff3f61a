#include <hetero/solver/prior_cost_model.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <algorithm>
#include <cstring>

namespace hetero {

namespace {

// Defaults where a provider reports 0 (unknown); hints, not measurements.
constexpr double kCpuBandwidthGbs = 20, kGpuBandwidthGbs = 500;
constexpr double kCpuGflops = 100, kGpuGflops = 10000;
// A device of kind CPU reached through a GPU API (PoCL, lavapipe) without
// an estimate of its own runs kernels written for GPUs: on this project's
// 2-core AMD EPYC host the default model decoded several times slower on
// PoCL and lavapipe than on the CPU provider (BENCHMARKS.md, partition
// solver section), so such devices get a quarter of their roofline.
constexpr double kGpuKernelsOnCpuEfficiency = 0.25;
// Host <-> device copies where memory is not shared (PCIe-class link).
constexpr double kLinkGbs = 12, kLinkLatency = 10e-6;
// Copies between devices that share the host's memory: a memcpy, when needed at all.
constexpr double kHostCopyGbs = 10, kHostCopyLatency = 2e-6;

}  // namespace

PriorCostModel::PriorCostModel(std::vector<DeviceRef> devices) : devices_(std::move(devices)), resources_(resource_ids(devices_)) {}

double PriorCostModel::roofline(size_t d, const OpShape& s) const {
    const hetero_device_props& p = devices_[d].props;
    const bool cpu = p.kind == HETERO_DEVICE_CPU;
    const double gflops = p.peak_gflops > 0 ? p.peak_gflops : cpu ? kCpuGflops : kGpuGflops;
    const double gbs = p.peak_bandwidth_gbs > 0 ? p.peak_bandwidth_gbs : cpu ? kCpuBandwidthGbs : kGpuBandwidthGbs;
    double t = std::max(s.flops() / (gflops * 1e9), s.bytes() / (gbs * 1e9));
    if (cpu) t /= kGpuKernelsOnCpuEfficiency;
    return t;
}

double PriorCostModel::node_seconds(size_t d, const OpShape& s) const {
    const auto key = std::make_tuple(d, s.family(), s.n, s.m, s.kv);
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cache_.find(key);
        if (it != cache_.end()) return it->second;
    }
    // Ask the provider with a one-node graph of this shape.
    std::vector<hetero_tensor_desc> t(5);
    auto desc = [&](size_t i, uint32_t dtype, std::initializer_list<int64_t> shape, uint32_t kind) {
        t[i] = hetero_tensor_desc{};
        t[i].dtype = dtype;
        t[i].kind = kind;
        t[i].ndim = uint32_t(shape.size());
        size_t j = 0;
        for (int64_t v : shape) t[i].shape[j++] = v;
    };
    hetero_node node{};
    node.op = s.op;
    const int64_t hd = 64;
    switch (s.op) {
        case HETERO_OP_MATMUL:
            desc(0, HETERO_DTYPE_F32, {s.n, s.k}, HETERO_TENSOR_BOUND);
            desc(1, s.dtype, {s.m, s.k}, HETERO_TENSOR_CONSTANT);
            desc(2, HETERO_DTYPE_F32, {s.n, s.m}, HETERO_TENSOR_BOUND);
            node.n_inputs = 2;
            node.inputs[0] = 0;
            node.inputs[1] = 1;
            node.output = 2;
            break;
        case HETERO_OP_ATTENTION:
            desc(0, HETERO_DTYPE_F32, {s.n, std::max<int64_t>(1, s.k / hd), hd}, HETERO_TENSOR_BOUND);
            desc(1, s.dtype, {std::max<int64_t>(2 * s.kv, 1), std::max<int64_t>(1, s.m / hd), hd}, HETERO_TENSOR_BOUND);
            desc(2, s.dtype, {std::max<int64_t>(2 * s.kv, 1), std::max<int64_t>(1, s.m / hd), hd}, HETERO_TENSOR_BOUND);
            desc(3, HETERO_DTYPE_I32, {s.n}, HETERO_TENSOR_BOUND);
            desc(4, HETERO_DTYPE_F32, {s.n, std::max<int64_t>(1, s.k / hd), hd}, HETERO_TENSOR_BOUND);
            node.n_inputs = 4;
            for (int i = 0; i < 4; ++i) node.inputs[i] = i;
            node.output = 4;
            node.fparams[0] = 0.125f;
            break;
        default:
            node.n_inputs = 0;
            break;
    }
    double est = -1;
    if (node.n_inputs > 0) {
        const DeviceRef& dev = devices_[d];
        if (dev.provider->api().op_supported(dev.provider->ep(), dev.index, &node, t.data(), uint32_t(t.size()), &est) != HETERO_OK) est = -1;
    }
    // The provider's own estimate where it has one; the roofline otherwise.
    const double v = est > 0 ? est : roofline(d, s);
    std::lock_guard<std::mutex> lock(mu_);
    cache_[key] = v;
    return v;
}

double PriorCostModel::launch_seconds(size_t d) const {
    return devices_[d].props.kind == HETERO_DEVICE_CPU ? 5e-6 : 30e-6;
}

double PriorCostModel::transfer_seconds(size_t from, size_t to, uint64_t bytes) const {
    if (from == to) return 0;
    const bool shared = (devices_[from].props.flags & devices_[to].props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) != 0;
    if (shared) return kHostCopyLatency + double(bytes) / (kHostCopyGbs * 1e9);
    return 2 * kLinkLatency + 2 * double(bytes) / (kLinkGbs * 1e9);
}

double PriorCostModel::compile_seconds(size_t d) const {
    // GPU APIs build kernels on first use (PoCL: over a minute on a cold
    // cache here); the CPU provider's kernels are compiled in.
    const DeviceRef& dev = devices_[d];
    return std::strcmp(dev.provider->name().c_str(), "cpu") == 0 ? 0.0 : 1.0;
}

std::string PriorCostModel::source(size_t) const { return "prior (provider estimates, roofline from device props)"; }

std::vector<int> resource_ids(const std::vector<DeviceRef>& devices) {
    // Without a resource field in the props: CPU-kind devices run on the
    // host's cores; every other device is its own resource.
    std::vector<int> ids(devices.size());
    int next = 1;
    for (size_t d = 0; d < devices.size(); ++d) ids[d] = devices[d].props.kind == HETERO_DEVICE_CPU ? 0 : next++;
    return ids;
}

}  // namespace hetero
