#include "vk_device.hpp"

#include <hetero/sdk/parallel_copy.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

namespace hetero::vk {

namespace {

bool has_extension(VkPhysicalDevice phys, const char* name) {
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> exts(n);
    if (vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, exts.data()) != VK_SUCCESS) return false;
    for (const auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

// Prefers a compute queue without graphics: on GPUs it is the async compute engine.
int pick_compute_family(VkPhysicalDevice phys) {
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qf(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf.data());
    for (uint32_t i = 0; i < nq; ++i)
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) return int(i);
    for (uint32_t i = 0; i < nq; ++i)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return int(i);
    return -1;
}

// Whether the device multiplies 16x16x16 f16 tiles into f32 on tensor cores
// through VK_NV_cooperative_matrix (the extension the shader compiler here speaks).
bool has_f16_coopmat(VkInstance instance, VkPhysicalDevice phys) {
    if (!instance || !has_extension(phys, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) return false;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &cf;
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (!cf.cooperativeMatrix) return false;
    auto props_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (!props_fn) return false;
    uint32_t n = 0;
    if (props_fn(phys, &n, nullptr) != VK_SUCCESS || n == 0) return false;
    std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    if (props_fn(phys, &n, props.data()) != VK_SUCCESS) return false;
    for (const auto& p : props)
        if (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
            p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV && p.DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
            p.scope == VK_SCOPE_SUBGROUP_NV)
            return true;
    return false;
}

}  // namespace

std::string unusable_reason(const DeviceInfo& info) {
    if (info.props.apiVersion < VK_API_VERSION_1_2) return "needs Vulkan 1.2";
    if (info.compute_family < 0) return "has no compute queue";
    if (!info.timeline_semaphore) return "lacks timeline semaphores (Vulkan 1.2)";
    if (info.props.limits.maxPerStageDescriptorStorageBuffers < kOperandBindings + 1)
        return "allows only " + std::to_string(info.props.limits.maxPerStageDescriptorStorageBuffers) + " storage buffers per shader (needs " +
               std::to_string(kOperandBindings + 1) + ")";
    if (info.props.limits.maxPushConstantsSize < sizeof(PushConstants)) return "has too little push-constant space";
    return {};
}

DeviceInfo describe(VkInstance instance, VkPhysicalDevice phys) {
    DeviceInfo d;
    d.phys = phys;
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    subgroup.pNext = &driver;
    driver.pNext = &ids;
    // Extension structs only where the device has the extension.
    void** tail = &ids.pNext;
    d.has_pci = has_extension(phys, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    if (d.has_pci) {
        *tail = &pci;
        tail = &pci.pNext;
    }
    if (has_extension(phys, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) *tail = &sm;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(phys, &p2);
    d.props = p2.properties;
    d.name = d.props.deviceName;
    d.driver_version = d.props.driverVersion;
    std::memcpy(d.uuid, d.props.pipelineCacheUUID, VK_UUID_SIZE);
    d.vendor_id = d.props.vendorID;
    std::memcpy(d.device_uuid, ids.deviceUUID, VK_UUID_SIZE);
    d.pci_domain = pci.pciDomain;
    d.pci_bus = pci.pciBus;
    d.pci_device = pci.pciDevice;
    d.pci_function = pci.pciFunction;
    d.sm_count = sm.shaderSMCount;
    d.min_offset_align = std::max<uint64_t>(4, d.props.limits.minStorageBufferOffsetAlignment);
    d.max_storage_range = d.props.limits.maxStorageBufferRange;
    d.max_groups_x = d.props.limits.maxComputeWorkGroupCount[0];
    d.subgroup_size = subgroup.subgroupSize;
    d.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                            (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                            (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) && subgroup.subgroupSize >= 4;

    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    d.storage16 = f11.storageBuffer16BitAccess;
    d.storage8 = f12.storageBuffer8BitAccess;
    d.update_after_bind = f12.descriptorBindingStorageBufferUpdateAfterBind;
    d.timeline_semaphore = f12.timelineSemaphore;
    d.compute_family = pick_compute_family(phys);
    const bool fp16 = f12.shaderFloat16, int8 = f12.shaderInt8;
    d.cooperative_matrix = has_extension(phys, "VK_KHR_cooperative_matrix") || has_extension(phys, "VK_NV_cooperative_matrix");
    d.coopmat_f16 = fp16 && d.subgroup_size == 32 && has_f16_coopmat(instance, phys);

    switch (d.props.deviceType) {
        case VK_PHYSICAL_DEVICE_TYPE_CPU: d.kind = HETERO_DEVICE_CPU; break;
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: d.kind = HETERO_DEVICE_GPU; break;
        default: d.kind = HETERO_DEVICE_OTHER; break;
    }

    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(phys, &mem);
    uint64_t biggest_local = 0;
    uint32_t biggest_heap = 0;
    for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
        if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mem.memoryHeaps[h].size > biggest_local) {
            biggest_local = mem.memoryHeaps[h].size;
            biggest_heap = h;
        }
    d.memory_bytes = biggest_local;
    // A non-discrete device whose main device-local heap is host-visible shares memory with the host.
    bool local_visible = false;
    for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
        const auto f = mem.memoryTypes[t].propertyFlags;
        if (mem.memoryTypes[t].heapIndex == biggest_heap && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
            (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
            local_visible = true;
    }
    const bool integrated = d.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                            d.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if ((integrated || (local_visible && d.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)) && local_visible)
        d.flags |= HETERO_DEVICE_FLAG_UNIFIED_MEMORY;

    std::string drv = driver.driverName[0] ? driver.driverName : "vulkan";
    if (driver.driverInfo[0]) drv += std::string(" ") + driver.driverInfo;
    const uint32_t api = d.props.apiVersion;
    drv += "; Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api)) + "." + std::to_string(VK_API_VERSION_MINOR(api));
    drv += "; subgroup " + std::to_string(d.subgroup_size);
    if (fp16) drv += "; fp16";
    if (int8) drv += "; int8";
    if (d.cooperative_matrix) drv += d.coopmat_f16 ? "; coopmat (f16 GEMM)" : "; coopmat";
    d.driver = drv;
    return d;
}

// ------------------------------------------------------------------ buffers

namespace {
std::atomic<uint64_t> g_buffer_ids{1};
}

DeviceBuffer::DeviceBuffer(Device& dev, uint32_t index, uint64_t size, MemoryUse use)
    : sdk::Buffer(index, size), dev_(dev), id_(g_buffer_ids.fetch_add(1)) {
    // Refuse before vkCreateBuffer: sizes beyond the device's limits are undefined behaviour there.
    if (dev.info().memory_bytes && size > dev.info().memory_bytes)
        sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "vulkan: " + std::to_string(size) + " bytes exceed the " +
                                                std::to_string(dev.info().memory_bytes) + " bytes of " + dev.info().name);
    VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    // Whole 32-bit words, so shaders reading a tensor's last word stay inside the buffer.
    ci.size = (size + 15) / 16 * 16;
    ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(dev.handle(), &ci, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(dev.handle(), buffer_, &req);
    try {
        alloc_ = dev.memory().allocate(req, use);
        check(vkBindBufferMemory(dev.handle(), buffer_, alloc_.memory, alloc_.offset), "vkBindBufferMemory");
    } catch (...) {
        dev.memory().free(alloc_);
        vkDestroyBuffer(dev.handle(), buffer_, nullptr);
        throw;
    }
}

DeviceBuffer::~DeviceBuffer() {
    dev_.flush_writes(true);  // a recorded write must not outlive its buffer
    vkDestroyBuffer(dev_.handle(), buffer_, nullptr);
    dev_.memory().free(alloc_);
}

// ------------------------------------------------------------------ device

Device::Device(const DeviceInfo& info, uint32_t index) : info_(info), index_(index) {
    if (const std::string why = unusable_reason(info); !why.empty()) sdk::fail(HETERO_ERR_UNSUPPORTED, "vulkan: " + info.name + " " + why);
    family_ = uint32_t(info.compute_family);

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
    qi.queueFamilyIndex = family_;
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
    check(vkCreateDevice(info.phys, &di, nullptr, &dev_), "vkCreateDevice");
    try {
        vkGetDeviceQueue(dev_, family_, 0, &queue_);
        VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        si.pNext = &ti;
        check(vkCreateSemaphore(dev_, &si, nullptr, &timeline_), "vkCreateSemaphore");
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pi.queueFamilyIndex = family_;
        check(vkCreateCommandPool(dev_, &pi, nullptr, &transfer_pool_), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = transfer_pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(dev_, &ai, &transfer_cb_), "vkAllocateCommandBuffers");
        check(vkCreateCommandPool(dev_, &pi, nullptr, &pending_pool_), "vkCreateCommandPool");
        pending_ring_.resize(4);
        for (PendingCb& p : pending_ring_) {
            ai.commandPool = pending_pool_;
            check(vkAllocateCommandBuffers(dev_, &ai, &p.cb), "vkAllocateCommandBuffers");
        }
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
    staging_.reset();
    pipelines_.reset();
    memory_.reset();
    if (transfer_pool_) vkDestroyCommandPool(dev_, transfer_pool_, nullptr);
    if (pending_pool_) vkDestroyCommandPool(dev_, pending_pool_, nullptr);
    if (timeline_) vkDestroySemaphore(dev_, timeline_, nullptr);
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

uint64_t Device::submit(VkCommandBuffer cb) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    return submit_locked(cb);
}

// Recorded writes go first, in the same vkQueueSubmit: no extra round trip.
uint64_t Device::submit_locked(VkCommandBuffer cb) {
    const VkCommandBuffer writes = close_pending();
    std::lock_guard<std::mutex> lock(submit_mu_);
    const uint64_t value = last_value_ + 1;
    VkCommandBuffer cbs[2];
    uint32_t n = 0;
    if (writes) cbs[n++] = writes;
    if (cb) cbs[n++] = cb;
    VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ti;
    si.commandBufferCount = n;
    si.pCommandBuffers = cbs;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline_;
    check(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    last_value_ = value;
    if (writes) pending_ring_[(pending_next_ + pending_ring_.size() - 1) % pending_ring_.size()].done_at = value;
    return value;
}

VkCommandBuffer Device::close_pending() {
    if (!pending_) return VK_NULL_HANDLE;
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                         &mb, 0, nullptr, 0, nullptr);
    const VkCommandBuffer cb = pending_;
    pending_ = VK_NULL_HANDLE;
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    return cb;
}

bool Device::record_small_write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size) {
    // vkCmdUpdateBuffer: 4-byte aligned, at most 64 KiB, data copied into the command buffer.
    if (size == 0 || size > 65536 || size % 4 || offset % 4) return false;
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (!pending_) {
        PendingCb& p = pending_ring_[pending_next_];
        if (p.done_at) wait(p.done_at);
        pending_next_ = (pending_next_ + 1) % pending_ring_.size();
        check(vkResetCommandBuffer(p.cb, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(p.cb, &bi), "vkBeginCommandBuffer");
        p.done_at = 0;
        pending_ = p.cb;
        // Earlier work may still read or write the targets.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                             VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    } else {
        // Writes within one buffer stay in call order.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    }
    vkCmdUpdateBuffer(pending_, dst.handle(), offset, size, src);
    return true;
}

void Device::flush_writes(bool wait_done) {
    uint64_t value = 0;
    {
        std::lock_guard<std::mutex> lock(pending_mu_);
        if (pending_) value = submit_locked(VK_NULL_HANDLE);
    }
    if (value && wait_done) wait(value);
}

void Device::wait(uint64_t value) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &timeline_;
    wi.pValues = &value;
    check(vkWaitSemaphores(dev_, &wi, UINT64_MAX), "vkWaitSemaphores");
}

bool Device::reached(uint64_t value) {
    uint64_t now = 0;
    check(vkGetSemaphoreCounterValue(dev_, timeline_, &now), "vkGetSemaphoreCounterValue");
    return now >= value;
}

void Device::wait_all() {
    flush_writes();
    uint64_t v;
    {
        std::lock_guard<std::mutex> lock(submit_mu_);
        v = last_value_;
    }
    if (v) wait(v);
}

template <class F>
void Device::run_transfer(F&& record) {
    check(vkResetCommandBuffer(transfer_cb_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(transfer_cb_, &bi), "vkBeginCommandBuffer");
    // Order against compute work submitted earlier and make host writes visible.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(transfer_cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    record(transfer_cb_);
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(transfer_cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &mb, 0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(transfer_cb_), "vkEndCommandBuffer");
    wait(submit(transfer_cb_));
}

namespace {
constexpr uint64_t kStagingBytes = uint64_t(32) << 20;
}

void Device::write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size) {
    if (dst.mapped()) {
        wait_all();  // earlier executions may still read or write these bytes
        std::memcpy(dst.mapped() + offset, src, size);
        return;
    }
    if (record_small_write(dst, offset, src, size)) return;
    std::lock_guard<std::mutex> lock(transfer_mu_);
    if (!staging_) staging_ = std::make_unique<DeviceBuffer>(*this, index_, kStagingBytes, MemoryUse::Host);
    const auto* s = static_cast<const uint8_t*>(src);
    for (uint64_t done = 0; done < size; done += kStagingBytes) {
        const uint64_t n = std::min(kStagingBytes, size - done);
        sdk::copy_in_parallel(staging_->mapped(), s + done, n);
        run_transfer([&](VkCommandBuffer cb) {
            VkBufferCopy c{0, offset + done, n};
            vkCmdCopyBuffer(cb, staging_->handle(), dst.handle(), 1, &c);
        });
    }
}

void Device::read(DeviceBuffer& src, uint64_t offset, void* dst, uint64_t size) {
    if (src.mapped()) {
        wait_all();
        std::memcpy(dst, src.mapped() + offset, size);
        return;
    }
    std::lock_guard<std::mutex> lock(transfer_mu_);
    if (!staging_) staging_ = std::make_unique<DeviceBuffer>(*this, index_, kStagingBytes, MemoryUse::Host);
    auto* d = static_cast<uint8_t*>(dst);
    for (uint64_t done = 0; done < size; done += kStagingBytes) {
        const uint64_t n = std::min(kStagingBytes, size - done);
        run_transfer([&](VkCommandBuffer cb) {
            VkBufferCopy c{offset + done, 0, n};
            vkCmdCopyBuffer(cb, src.handle(), staging_->handle(), 1, &c);
        });
        sdk::copy_in_parallel(d + done, staging_->mapped(), n);
    }
}

void Device::copy(DeviceBuffer& src, uint64_t src_offset, DeviceBuffer& dst, uint64_t dst_offset, uint64_t size) {
    if (&src == &dst && src_offset < dst_offset + size && dst_offset < src_offset + size) {
        // vkCmdCopyBuffer forbids overlapping regions: bounce through the host.
        std::vector<uint8_t> tmp(size);
        read(src, src_offset, tmp.data(), size);
        write(dst, dst_offset, tmp.data(), size);
        return;
    }
    std::lock_guard<std::mutex> lock(transfer_mu_);
    run_transfer([&](VkCommandBuffer cb) {
        VkBufferCopy c{src_offset, dst_offset, size};
        vkCmdCopyBuffer(cb, src.handle(), dst.handle(), 1, &c);
    });
}

}  // namespace hetero::vk
