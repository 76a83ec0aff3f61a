// The cost model for a first run, before anything was measured: each node's
// time is the provider's own op_supported estimate for that shape on that
// device, or, where the provider gives none, the SDK's roofline
// (sdk/roofline.hpp) over the device's props; launch, transfer and compile
// costs come from the ABI 1.1 hints in hetero_device_props, or defaults per
// device kind for a provider that does not fill them.
#pragma once

#include <hetero/runtime/cost_model.hpp>
#include <hetero/sdk/roofline.hpp>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

namespace hetero {

// A one-node graph with the shape `shape` describes, built to ask a provider
// about it (op_supported, or a profiler's compile and execute). Tensor layout
// per op (n = shape.n, k = shape.k, m = shape.m):
//   matmul      x [n, k] F32, W [m, k] shape.dtype (constant) -> [n, m] F32
//   attention   q [n, k/hd, hd] F32, K and V caches [C, m/hd, hd] shape.dtype,
//               positions [n] -> [n, k/hd, hd]; hd = 64 where it divides k and
//               m (else the largest power of two that does), C = 2 kv - 1, so
//               the roofline's mean attended rows (C + 1) / 2 is kv
//   embedding   table [max(m, n), k] shape.dtype (constant), ids [n] -> [n, k] F32
//   store_rows  src [n, k] F32, positions [n] -> cache [max(n, kv), k] shape.dtype
//   rope        x [n, k/hd, hd] (hd as for attention) and positions [n]
//   rmsnorm     x [n, k], weight [k] (constant); convert x [n, k] F32 -> shape.dtype;
//   others      inputs and output [n, k] F32
// Weights are HETERO_TENSOR_CONSTANT, everything else HETERO_TENSOR_BOUND.
struct ShapeNode {
    std::vector<hetero_tensor_desc> tensors;
    hetero_node node{};
};
// Throws hetero::Error for an op it does not know or a shape with a
// non-positive n or k.
ShapeNode node_of_shape(const OpShape& shape);

class PriorCostModel final : public CostModel {
public:
    explicit PriorCostModel(const std::vector<DeviceRef>& devices);

    // The provider's estimate (op_supported's est_seconds) for node_of_shape,
    // else the roofline over the props (see kFallback* below); negative when
    // the provider says it cannot run the node. Answers are cached per
    // device and shape (every OpShape field: the family, n and kv). Thread-safe.
    double node_seconds(size_t device, const OpShape& shape) const override;
    // launch_seconds_hint, else kDefaultLaunchCpu / kDefaultLaunchOther.
    double launch_seconds(size_t device) const override;
    // 0 on one device; two devices sharing the host's memory: one memcpy at
    // kHostCopyBytesPerSecond plus kUnifiedLatency; otherwise a read out of
    // the source and a write into the destination, each at
    // kBusBytesPerSecond (kHostCopyBytesPerSecond for a side in host
    // memory), plus kBusLatency.
    double transfer_seconds(size_t from, size_t to, uint64_t bytes) const override;
    // compile_seconds_hint, else 0 (a 1.0 provider does not say).
    double compile_seconds(size_t device) const override;
    std::string source(size_t device) const override;

    // Host seconds of one execute + wait when the provider gives no hint:
    // the CPU provider measures ~0.1-2 us (synchronous), GPU stacks 5-60 us
    // (PoCL ~30 us, lavapipe ~30-55 us on the 2-core VM of BENCHMARKS.md).
    static constexpr double kDefaultLaunchCpu = 5e-6;
    static constexpr double kDefaultLaunchOther = 30e-6;
    // Transfers: a host memcpy of ~10 GB/s (a single thread's copy, not the
    // DRAM peak), PCIe-ish 12 GB/s each way for device memory (PCIe 3.0 x16
    // delivers ~12, 4.0 x16 ~25), and the fixed costs of one copy call and
    // synchronisation.
    static constexpr double kHostCopyBytesPerSecond = 10e9;
    static constexpr double kBusBytesPerSecond = 12e9;
    static constexpr double kUnifiedLatency = 2e-6;
    static constexpr double kBusLatency = 10e-6;
    // The roofline for a provider that gives no estimate: its kernels are
    // assumed to reach half the (possibly defaulted) peak and bandwidth, and
    // each node to cost one dispatch.
    static constexpr double kFallbackEfficiency = 0.5;
    static constexpr double kFallbackDispatchCpu = 1e-6;
    static constexpr double kFallbackDispatchOther = 5e-6;
    // Physical bounds on any answer (a provider's estimate or the roofline):
    // no node moves its bytes faster than 10 TB/s or does its arithmetic
    // faster than 10 PFLOP/s, and none takes more than an hour. An estimate
    // outside them is clamped, with one warning per provider.
    static constexpr double kMaxBytesPerSecond = 1e13;
    static constexpr double kMaxFlopsPerSecond = 1e16;
    static constexpr double kMaxNodeSeconds = 3600;

private:
    using Key = std::tuple<size_t, uint32_t, uint32_t, int64_t, int64_t, int64_t, int64_t>;  // device, op, dtype, n, k, m, kv
    double ask(size_t device, const OpShape& shape) const;
    // `seconds` held to the physical bounds of `work`; warns (once per
    // provider) when a provider's own estimate had to be moved.
    double within_physics(size_t device, const OpShape& shape, double seconds, const sdk::NodeWork& work, bool estimate) const;

    std::vector<DeviceRef> devices_;
    mutable std::mutex mutex_;
    mutable std::map<Key, double> cache_;
    mutable std::set<std::string> warned_;  // providers whose estimates were clamped
};

}  // namespace hetero
