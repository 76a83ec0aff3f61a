#include "vk_profile.hpp"

#include "vk_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace hetero::vk {

bool profiling_enabled() {
    static const bool on = [] {
        const char* e = std::getenv("HETERO_VK_PROFILE");
        return e && std::strcmp(e, "1") == 0;
    }();
    return on;
}

DispatchProfiler::DispatchProfiler(Device& dev, std::vector<std::string> labels, std::vector<uint64_t> bytes)
    : dev_(dev), labels_(std::move(labels)), bytes_(std::move(bytes)), sum_us_(labels_.size(), 0.0) {
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(dev.info().phys, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qf(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(dev.info().phys, &nq, qf.data());
    const uint32_t bits = qf[dev.queue_family()].timestampValidBits;
    if (bits == 0 || dev.info().props.limits.timestampPeriod <= 0) {
        sdk::log(HETERO_LOG_WARN, kProviderName, "profile: the compute queue has no timestamps");
        return;
    }
    mask_ = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    period_ns_ = dev.info().props.limits.timestampPeriod;
    VkQueryPoolCreateInfo ci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    ci.queryCount = uint32_t(labels_.size() + 1);
    check(vkCreateQueryPool(dev.handle(), &ci, nullptr, &pool_), "vkCreateQueryPool");
}

DispatchProfiler::~DispatchProfiler() {
    if (pool_) vkDestroyQueryPool(dev_.handle(), pool_, nullptr);
}

void DispatchProfiler::record_start(VkCommandBuffer cb) {
    if (!pool_) return;
    vkCmdResetQueryPool(cb, pool_, 0, uint32_t(labels_.size() + 1));
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 0);
}

void DispatchProfiler::record_after(VkCommandBuffer cb, size_t i) {
    if (pool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, uint32_t(i + 1));
}

void DispatchProfiler::collect(double host_us) {
    if (!pool_) return;
    std::vector<uint64_t> ts(labels_.size() + 1);
    const VkResult r = vkGetQueryPoolResults(dev_.handle(), pool_, 0, uint32_t(ts.size()), ts.size() * 8, ts.data(), 8,
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return;
    auto us = [&](size_t a, size_t b) { return double((ts[b] - ts[a]) & mask_) * period_ns_ * 1e-3; };
    for (size_t i = 0; i < labels_.size(); ++i) sum_us_[i] += us(i, i + 1);
    gpu_us_ += us(0, labels_.size());
    host_us_ += host_us;
    ++runs_;
}

void DispatchProfiler::report() const {
    if (!pool_ || runs_ == 0) return;
    struct Group { size_t count = 0; double us = 0; uint64_t bytes = 0; };
    std::map<std::string, Group> groups;
    for (size_t i = 0; i < labels_.size(); ++i) {
        Group& g = groups[labels_[i]];
        ++g.count;
        g.us += sum_us_[i] / double(runs_);
        g.bytes += bytes_[i];
    }
    std::vector<std::pair<std::string, Group>> sorted(groups.begin(), groups.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
    char line[512];
    std::snprintf(line, sizeof(line), "profile: %zu dispatches, %llu runs: gpu %.1f us/run, host submit-to-done %.1f us/run",
                  labels_.size(), (unsigned long long)runs_, gpu_us_ / double(runs_), host_us_ / double(runs_));
    sdk::log(HETERO_LOG_WARN, kProviderName, line);
    for (const auto& [label, g] : sorted) {
        std::snprintf(line, sizeof(line), "profile: %8.1f us %5.1f%% x%-3zu %6.2f us each %7.1f GB/s  %s", g.us,
                      100.0 * g.us / (gpu_us_ / double(runs_)), g.count, g.us / double(g.count), double(g.bytes) / (g.us * 1e3),
                      label.c_str());
        sdk::log(HETERO_LOG_WARN, kProviderName, line);
    }
}

}  // namespace hetero::vk
