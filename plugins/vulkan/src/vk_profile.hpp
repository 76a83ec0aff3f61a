// Per-dispatch GPU timing, on when HETERO_VK_PROFILE=1: timestamps after each
// dispatch of a compiled subgraph, summed and logged by sdk::DispatchTimes
// (grouped by shader and shape) when the executable is released.
#pragma once

#include "vk_common.hpp"

#include <hetero/sdk/dispatch_profile.hpp>

#include <string>
#include <vector>

namespace hetero::vk {

class Device;

bool profiling_enabled();

class DispatchProfiler {
public:
    // labels[i] and bytes[i] describe dispatch i (bytes: operand traffic, for GB/s).
    DispatchProfiler(Device& dev, std::vector<std::string> labels, std::vector<uint64_t> bytes);
    ~DispatchProfiler();
    DispatchProfiler(const DispatchProfiler&) = delete;
    DispatchProfiler& operator=(const DispatchProfiler&) = delete;

    void record_start(VkCommandBuffer cb);
    void record_after(VkCommandBuffer cb, size_t dispatch);
    // Reads the timestamps of the run that just finished; `host_us` is its submit-to-done wall time.
    void collect(double host_us);
    void report() const;

private:
    Device& dev_;
    VkQueryPool pool_ = VK_NULL_HANDLE;
    sdk::DispatchTimes times_;
    double period_ns_ = 1;
    uint64_t mask_ = ~uint64_t(0);
};

}  // namespace hetero::vk
