// Opening a device for compute: the logical device with only the features
// the shaders use, then its queue, transfers, allocator and pipelines.
#include "vk_device.hpp"

#include <vector>

namespace hetero::vk {

namespace {

// The logical device of `info` with one queue of its compute family.
VkDevice create_logical_device(const DeviceInfo& info) {
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(info.phys, &f2);
    // Enable only what the shaders use.
    VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    e12.timelineSemaphore = VK_TRUE;
    e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
    e12.shaderInt8 = f12.shaderInt8;
    e12.shaderFloat16 = f12.shaderFloat16;
    e12.descriptorBindingStorageBufferUpdateAfterBind = info.update_after_bind ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
    e11.pNext = &e12;
    VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    e2.features.shaderInt16 = f2.features.shaderInt16;
    e2.pNext = &e11;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = uint32_t(info.compute_family);
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV ecm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    std::vector<const char*> extensions;
    if (info.coopmat_f16) {
        ecm.cooperativeMatrix = VK_TRUE;
        e12.pNext = &ecm;
        extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.pNext = &e2;
    di.enabledExtensionCount = uint32_t(extensions.size());
    di.ppEnabledExtensionNames = extensions.data();
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    VkDevice dev = VK_NULL_HANDLE;
    check(vkCreateDevice(info.phys, &di, nullptr, &dev), "vkCreateDevice");
    return dev;
}

}  // namespace

Device::Device(const DeviceInfo& info, uint32_t index) : info_(info), index_(index) {
    if (const std::string why = unusable_reason(info); !why.empty()) sdk::fail(HETERO_ERR_UNSUPPORTED, "vulkan: " + info.name + " " + why);
    family_ = uint32_t(info.compute_family);
    dev_ = create_logical_device(info);
    try {
        queue_ = std::make_unique<Queue>(dev_, family_);
        transfers_ = std::make_unique<Transfers>(*this);
        memory_ = std::make_unique<MemoryAllocator>(info.phys, dev_, (info.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) != 0);
        pipelines_ = std::make_unique<Pipelines>(dev_, info.uuid, info.driver_version, info.update_after_bind);
    } catch (...) {
        release();
        throw;
    }
}

Device::~Device() { release(); }

void Device::release() noexcept {
    if (!dev_) return;
    vkDeviceWaitIdle(dev_);
    transfers_.reset();  // its staging buffer flushes recorded writes (queue_) and frees its memory (memory_)
    pipelines_.reset();
    memory_.reset();
    queue_.reset();
    vkDestroyDevice(dev_, nullptr);
    dev_ = VK_NULL_HANDLE;
}

Device& LazyDevice::open() {
    if (Device* d = opened_.load(std::memory_order_acquire)) return *d;
    std::lock_guard<std::mutex> lock(open_mu_);
    if (!device_) {
        device_ = std::make_unique<Device>(info_, index_);
        opened_.store(device_.get(), std::memory_order_release);
    }
    return *device_;
}

}  // namespace hetero::vk
