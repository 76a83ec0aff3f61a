// op_supported's time estimate for the CPU provider: the SDK's roofline
// (sdk/roofline.hpp) over the device's peak and bandwidth hints, scaled by
// what this provider's kernels were measured to reach.
#pragma once

#include "kernels.hpp"

#include <hetero/ep_api.h>

namespace hetero::cpu {

// Host seconds of one execute of a trivial graph (the ABI 1.1
// launch_seconds_hint): the CPU runs graphs synchronously in execute(), so
// this is the SDK's checks and a thread-pool dispatch. bench_op_estimates
// measured 0.1 us for a 32-element add (2-core AMD EPYC VM, 2026-11-24),
// where the pool is not woken; 2 us allows for one wake-up.
inline constexpr double kLaunchSeconds = 2e-6;

// Seconds `node` takes on a device of `peak_gflops` / `bandwidth_gbs` (the
// props' hints) with kernel table `k`; `packed` when quantized weights are
// repacked at compile (option pack_weights=1 and a packed kernel exists).
double estimate_seconds(const Kernels& k, bool packed, double peak_gflops, double bandwidth_gbs, const hetero_node& node,
                        const hetero_tensor_desc* tensors);

}  // namespace hetero::cpu
