// Physical-device discovery: what a device reports (properties, features,
// memory heaps, extensions) read into DeviceInfo, and why one cannot be
// opened for compute.
#include "vk_device_info.hpp"
#include "vk_pipelines.hpp"

#include <algorithm>
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

// Properties, limits, subgroups, identity (UUIDs, PCI address) and SM
// count; returns the driver's properties (for the driver string).
VkPhysicalDeviceDriverProperties read_properties(DeviceInfo& d, VkPhysicalDevice phys) {
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
    driver.pNext = nullptr;  // the chain's other structs end here
    return driver;
}

// Arithmetic the shaders may use, for the driver string.
struct ShaderArithmetic {
    bool fp16 = false, int8 = false;
};

// Features (16/8-bit storage, update-after-bind, timeline semaphores), the
// compute queue and cooperative matrices; needs read_properties' subgroup size.
ShaderArithmetic read_features(DeviceInfo& d, VkInstance instance, VkPhysicalDevice phys) {
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
    const ShaderArithmetic a{f12.shaderFloat16 != VK_FALSE, f12.shaderInt8 != VK_FALSE};
    d.cooperative_matrix = has_extension(phys, "VK_KHR_cooperative_matrix") || has_extension(phys, "VK_NV_cooperative_matrix");
    d.coopmat_f16 = a.fp16 && d.subgroup_size == 32 && has_f16_coopmat(instance, phys);
    return a;
}

uint32_t device_kind(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return HETERO_DEVICE_CPU;
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return HETERO_DEVICE_GPU;
        default: return HETERO_DEVICE_OTHER;
    }
}

// The largest device-local heap, and whether the device shares memory with
// the host: a non-discrete device whose main device-local heap is host-visible.
void read_memory(DeviceInfo& d, VkPhysicalDevice phys) {
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
}

std::string driver_string(const DeviceInfo& d, const VkPhysicalDeviceDriverProperties& driver, ShaderArithmetic a) {
    std::string drv = driver.driverName[0] ? driver.driverName : "vulkan";
    if (driver.driverInfo[0]) drv += std::string(" ") + driver.driverInfo;
    const uint32_t api = d.props.apiVersion;
    drv += "; Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api)) + "." + std::to_string(VK_API_VERSION_MINOR(api));
    drv += "; subgroup " + std::to_string(d.subgroup_size);
    if (a.fp16) drv += "; fp16";
    if (a.int8) drv += "; int8";
    if (d.cooperative_matrix) drv += d.coopmat_f16 ? "; coopmat (f16 GEMM)" : "; coopmat";
    return drv;
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
    const VkPhysicalDeviceDriverProperties driver = read_properties(d, phys);
    const ShaderArithmetic arithmetic = read_features(d, instance, phys);
    d.kind = device_kind(d.props.deviceType);
    read_memory(d, phys);
    d.driver = driver_string(d, driver, arithmetic);
    if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) d.loop_iteration_cap = 65535;
    return d;
}

}  // namespace hetero::vk
