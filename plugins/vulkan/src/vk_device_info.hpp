// One Vulkan physical device as the provider discovers it: its properties
// and features as the ABI and the lowering need them (DeviceInfo), read
// without opening the device, and whether the provider can open it for
// compute (vk_discovery.cpp).
#pragma once

#include "vk_common.hpp"

#include <string>

namespace hetero::vk {

struct DeviceInfo {
    VkPhysicalDevice phys = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties props{};
    std::string name;
    std::string driver;
    uint32_t kind = HETERO_DEVICE_GPU;
    uint32_t flags = 0;
    uint64_t memory_bytes = 0;
    uint32_t subgroup_size = 0;
    bool subgroup_arithmetic = false;
    // CPU implementations (lavapipe): compact shaders that their compilers
    // build fast, narrow workgroups (option gpu_kernels=1 turns this off).
    bool compact_kernels = false;
    // Loop iterations one shader invocation may run, all its loops together,
    // before the implementation ends them early without a word; 0 = no cap.
    // llvmpipe (lavapipe) caps them at 65535 (LP_MAX_TGSI_LOOP_ITERATIONS),
    // so long key loops need splitting there (vk_attention.cpp).
    uint32_t loop_iteration_cap = 0;
    bool storage16 = false;
    bool storage8 = false;
    bool update_after_bind = false;
    bool cooperative_matrix = false;
    // Tensor-core GEMM: VK_NV_cooperative_matrix with 16x16x16 f16 x f16 + f32
    // subgroup matrices, f16 arithmetic and 32-wide subgroups.
    bool coopmat_f16 = false;
    uint8_t uuid[VK_UUID_SIZE]{};  // pipelineCacheUUID (keys the pipeline cache)
    uint32_t driver_version = 0;
    // The physical device, for hetero_device_props.resource: deviceUUID
    // (VkPhysicalDeviceIDProperties; OpenCL's cl_khr_device_uuid gives the
    // same one) and, with VK_EXT_pci_bus_info, the PCI address.
    uint32_t vendor_id = 0;
    uint8_t device_uuid[VK_UUID_SIZE]{};
    bool has_pci = false;
    uint32_t pci_domain = 0, pci_bus = 0, pci_device = 0, pci_function = 0;
    // Streaming multiprocessors (VK_NV_shader_sm_builtins); 0 = not reported.
    uint32_t sm_count = 0;
    uint64_t min_offset_align = 16;
    uint64_t max_storage_range = 1ull << 27;
    uint32_t max_groups_x = 65535;
    int compute_family = -1;  // queue family the device opens with; -1 = none
    bool timeline_semaphore = false;
};

// Reads the properties and features of `phys`; never throws.
DeviceInfo describe(VkInstance instance, VkPhysicalDevice phys);

// Why the provider cannot open `info` for compute, or "" when it can. Only
// queries the physical device, so unusable devices are dropped at discovery.
std::string unusable_reason(const DeviceInfo& info);

}  // namespace hetero::vk
