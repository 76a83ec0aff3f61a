#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/roofline.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hetero {
namespace {

using sdk::make_desc;

// The head dim node_of_shape gives attention and rope: 64 where it divides
// every width, else the largest power of two that does.
int64_t head_dim(std::initializer_list<int64_t> widths) {
    for (int64_t hd : {64, 128, 32, 16, 8, 4, 2}) {
        bool ok = true;
        for (int64_t w : widths) ok = ok && w % hd == 0;
        if (ok) return hd;
    }
    return 1;
}

constexpr uint32_t kF32 = HETERO_DTYPE_F32;
constexpr uint32_t kBound = HETERO_TENSOR_BOUND, kConstant = HETERO_TENSOR_CONSTANT;

}  // namespace

ShapeNode node_of_shape(const OpShape& s) {
    if (s.n <= 0 || s.k <= 0)
        throw Error("cost model: op " + std::string(sdk::op_name(s.op)) + " with n = " + std::to_string(s.n) + ", k = " + std::to_string(s.k));
    ShapeNode g;
    auto& t = g.tensors;
    hetero_node& node = g.node;
    node.op = s.op;
    auto inputs = [&](std::initializer_list<int32_t> ids) {
        node.n_inputs = 0;
        for (int32_t id : ids) node.inputs[node.n_inputs++] = id;
        node.output = int32_t(ids.size());
    };
    const int64_t n = s.n, k = s.k;
    switch (s.op) {
        case HETERO_OP_MATMUL:
            t = {make_desc(kF32, kBound, {n, k}), make_desc(s.dtype, kConstant, {std::max<int64_t>(s.m, 1), k}),
                 make_desc(kF32, kBound, {n, std::max<int64_t>(s.m, 1)})};
            inputs({0, 1});
            break;
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: {
            // Query heads must be a multiple of KV heads: without that (k not
            // a multiple of m) the caches get k's width.
            const int64_t m = s.m > 0 && k % s.m == 0 ? s.m : k;
            const int64_t hd = head_dim({k, m});
            const int64_t cache_rows = std::max<int64_t>(1, 2 * std::max<int64_t>(s.kv, 1) - 1);
            // ATTENTION_SEQS: a sequence of cache_rows rows for each query row.
            const int64_t stacked = s.op == HETERO_OP_ATTENTION_SEQS ? n * cache_rows : cache_rows;
            t = {make_desc(kF32, kBound, {n, k / hd, hd}), make_desc(s.dtype, kBound, {stacked, m / hd, hd}),
                 make_desc(s.dtype, kBound, {stacked, m / hd, hd}), make_desc(HETERO_DTYPE_I32, kBound, {n}),
                 make_desc(kF32, kBound, {n, k / hd, hd})};
            inputs({0, 1, 2, 3});
            node.fparams[0] = float(1.0 / std::sqrt(double(hd)));
            if (s.op == HETERO_OP_ATTENTION_SEQS) node.iparams[1] = cache_rows;
            break;
        }
        case HETERO_OP_EMBEDDING:
            t = {make_desc(s.dtype, kConstant, {std::max(s.m, n), k}), make_desc(HETERO_DTYPE_I32, kBound, {n}),
                 make_desc(kF32, kBound, {n, k})};
            inputs({0, 1});
            break;
        case HETERO_OP_STORE_ROWS:
            t = {make_desc(kF32, kBound, {n, k}), make_desc(HETERO_DTYPE_I32, kBound, {n}),
                 make_desc(s.dtype, kBound, {std::max(n, s.kv), k})};
            inputs({0, 1});
            break;
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: {
            const int64_t hd = head_dim({k});
            t = {make_desc(kF32, kBound, {n, k / hd, hd}), make_desc(HETERO_DTYPE_I32, kBound, {n}),
                 make_desc(kF32, kBound, {n, k / hd, hd})};
            inputs({0, 1});
            node.fparams[0] = 10000.f;
            node.iparams[0] = HETERO_ROPE_ADJACENT;
            break;
        }
        case HETERO_OP_RMSNORM:
            t = {make_desc(kF32, kBound, {n, k}), make_desc(kF32, kConstant, {k}), make_desc(kF32, kBound, {n, k})};
            inputs({0, 1});
            node.fparams[0] = 1e-5f;
            break;
        case HETERO_OP_CONVERT:
            t = {make_desc(kF32, kBound, {n, k}), make_desc(s.dtype, kBound, {n, k})};
            inputs({0});
            break;
        case HETERO_OP_SOFTMAX:
        case HETERO_OP_SOFTCAP:
            node.fparams[0] = s.op == HETERO_OP_SOFTCAP ? 30.f : 0.f;
            t = {make_desc(kF32, kBound, {n, k}), make_desc(kF32, kBound, {n, k})};
            inputs({0});
            break;
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
        case HETERO_OP_ADD:
        case HETERO_OP_MUL:
            t = {make_desc(kF32, kBound, {n, k}), make_desc(kF32, kBound, {n, k}), make_desc(kF32, kBound, {n, k})};
            inputs({0, 1});
            break;
        default: throw Error("cost model: unknown op " + std::to_string(s.op));
    }
    return g;
}

PriorCostModel::PriorCostModel(const std::vector<DeviceRef>& devices) : devices_(devices) {}

double PriorCostModel::node_seconds(size_t device, const OpShape& shape) const {
    const Key key{device, shape.op, shape.dtype, shape.n, shape.k, shape.m, shape.kv};
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    // Asked without the lock: providers may take milliseconds (a first call
    // may discover devices); a concurrent duplicate asks twice, harmlessly.
    const double seconds = ask(device, shape);
    std::lock_guard<std::mutex> lock(mutex_);
    cache_.emplace(key, seconds);
    return seconds;
}

double PriorCostModel::ask(size_t device, const OpShape& shape) const {
    const DeviceRef& d = devices_.at(device);
    const ShapeNode g = node_of_shape(shape);
    double est = -1.0;
    for (const hetero_tensor_desc& t : g.tensors)  // dtypes since 1.1 only where advertised
        if (t.dtype >= HETERO_DTYPE_COUNT_1_0 && !(d.props.dtype_mask & HETERO_DTYPE_BIT(t.dtype))) return -1.0;
    const hetero_status st =
        d.provider->api().op_supported(d.provider->ep(), d.index, &g.node, g.tensors.data(), uint32_t(g.tensors.size()), &est);
    if (st != HETERO_OK) {
        if (st != HETERO_ERR_UNSUPPORTED) {
            // Not a refusal but an error (a malformed synthesized node would
            // be a bug here): the device is treated as unable, and it shows.
            const char* why = d.provider->api().last_error();
            log(LogLevel::warn, d.label() + ": op_supported(" + sdk::op_name(shape.op) + ") failed: " + (why ? why : "no message"));
        }
        return -1.0;
    }
    const sdk::NodeWork work = sdk::node_work(g.node, g.tensors.data());
    if (est >= 0.0 && std::isfinite(est)) return within_physics(device, shape, est, work, true);
    sdk::Roofline r = sdk::roofline_from_props(d.props);
    r.compute_efficiency = r.bandwidth_efficiency = kFallbackEfficiency;
    r.dispatch_seconds = d.props.kind == HETERO_DEVICE_CPU ? kFallbackDispatchCpu : kFallbackDispatchOther;
    return within_physics(device, shape, sdk::roofline_seconds(work, r), work, false);
}

double PriorCostModel::within_physics(size_t device, const OpShape& shape, double seconds, const sdk::NodeWork& work, bool estimate) const {
    const double floor = std::max(work.bytes / kMaxBytesPerSecond, work.flops / kMaxFlopsPerSecond);
    const double bounded = std::min(std::max(seconds, floor), std::max(floor, kMaxNodeSeconds));
    if (bounded == seconds || !estimate) return bounded;
    const DeviceRef& d = devices_.at(device);
    const std::string provider = d.provider ? d.provider->name() : d.label();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!warned_.insert(provider).second) return bounded;
    }
    log(LogLevel::warn, fmt::format("provider {} estimates {} s for {} on {}, outside physical bounds ({:.3g} s at 10 TB/s and 10 PFLOP/s, "
                                    "at most {} s): its estimates are clamped to them",
                                    provider, seconds, shape.family(), d.label(), floor, kMaxNodeSeconds));
    return bounded;
}

double PriorCostModel::launch_seconds(size_t device) const {
    const hetero_device_props& p = devices_.at(device).props;
    if (HETERO_HAS_FIELD(hetero_device_props, &p, launch_seconds_hint) && p.launch_seconds_hint > 0) return p.launch_seconds_hint;
    return p.kind == HETERO_DEVICE_CPU ? kDefaultLaunchCpu : kDefaultLaunchOther;
}

double PriorCostModel::transfer_seconds(size_t from, size_t to, uint64_t bytes) const {
    if (from == to || bytes == 0) return 0.0;
    auto in_host_memory = [&](size_t d) { return (devices_.at(d).props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) != 0; };
    const double b = double(bytes);
    if (in_host_memory(from) && in_host_memory(to)) return kUnifiedLatency + b / kHostCopyBytesPerSecond;
    auto side = [&](size_t d) { return b / (in_host_memory(d) ? kHostCopyBytesPerSecond : kBusBytesPerSecond); };
    return kBusLatency + side(from) + side(to);
}

double PriorCostModel::compile_seconds(size_t device) const {
    const hetero_device_props& p = devices_.at(device).props;
    if (HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint) && p.compile_seconds_hint > 0) return p.compile_seconds_hint;
    return 0.0;
}

std::string PriorCostModel::source(size_t) const { return "prior (roofline from device props and provider estimates)"; }

}  // namespace hetero
