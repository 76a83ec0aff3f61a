#include "vk_profile.hpp"

#include "vk_device.hpp"

namespace hetero::vk {

bool profiling_enabled() {
    static const bool on = sdk::env_equals("HETERO_VK_PROFILE", "1");
    return on;
}

DispatchProfiler::DispatchProfiler(Device& dev, std::vector<std::string> labels, std::vector<uint64_t> bytes)
    : dev_(dev), times_(kProviderName, std::move(labels), std::move(bytes)) {
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
    ci.queryCount = uint32_t(times_.size() + 1);
    check(vkCreateQueryPool(dev.handle(), &ci, nullptr, &pool_), "vkCreateQueryPool");
}

DispatchProfiler::~DispatchProfiler() {
    if (pool_) vkDestroyQueryPool(dev_.handle(), pool_, nullptr);
}

void DispatchProfiler::record_start(VkCommandBuffer cb) {
    if (!pool_) return;
    vkCmdResetQueryPool(cb, pool_, 0, uint32_t(times_.size() + 1));
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 0);
}

void DispatchProfiler::record_after(VkCommandBuffer cb, size_t i) {
    if (pool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, uint32_t(i + 1));
}

void DispatchProfiler::collect(double host_us) {
    if (!pool_) return;
    std::vector<uint64_t> ts(times_.size() + 1);
    const VkResult r = vkGetQueryPoolResults(dev_.handle(), pool_, 0, uint32_t(ts.size()), ts.size() * 8, ts.data(), 8,
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return;
    auto us = [&](size_t a, size_t b) { return double((ts[b] - ts[a]) & mask_) * period_ns_ * 1e-3; };
    std::vector<double> each(times_.size());
    for (size_t i = 0; i < each.size(); ++i) each[i] = us(i, i + 1);
    times_.add_run(each, us(0, each.size()), host_us);
}

void DispatchProfiler::report() const {
    if (pool_) times_.report();
}

}  // namespace hetero::vk
