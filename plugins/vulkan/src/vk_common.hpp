// Vulkan result checking: every failing call becomes a hetero::sdk::Error
// whose status tells the core what happened (memory, lost device, ...).
#pragma once

#include <hetero/sdk/provider.hpp>
#include <vulkan/vulkan.h>

#include <string>

namespace hetero::vk {

inline const char* kProviderName = "vulkan";

inline const char* result_name(VkResult r) {
    switch (r) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_NOT_READY: return "VK_NOT_READY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
        case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
        default: return "VkResult error";
    }
}

inline hetero_status status_of(VkResult r) {
    switch (r) {
        case VK_ERROR_OUT_OF_HOST_MEMORY:
        case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        case VK_ERROR_OUT_OF_POOL_MEMORY:
        case VK_ERROR_FRAGMENTED_POOL:
        case VK_ERROR_TOO_MANY_OBJECTS: return HETERO_ERR_OUT_OF_MEMORY;
        case VK_ERROR_DEVICE_LOST: return HETERO_ERR_DEVICE_LOST;
        case VK_ERROR_FEATURE_NOT_PRESENT:
        case VK_ERROR_EXTENSION_NOT_PRESENT: return HETERO_ERR_UNSUPPORTED;
        default: return HETERO_ERR_INTERNAL;
    }
}

inline void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        sdk::fail(status_of(r), std::string("vulkan: ") + what + " failed: " + result_name(r) + " (" + std::to_string(int(r)) + ")");
}

}  // namespace hetero::vk
