// The Vulkan execution provider: one instance, every usable physical device.
// create() only checks the options. The first call that needs devices
// creates the instance and describes the physical devices (that loads the
// ICDs: lavapipe brings LLVM, about 25 ms here); no loader ICD or no Vulkan
// 1.2 device leaves zero devices, with the reason as device_count's error.
// Each device is opened on its first buffer or compile, and an error there
// is that call's error.
#include "vk_device.hpp"
#include "vk_estimate.hpp"
#include "vk_executable.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace hetero::vk {

namespace {

bool layer_available(const char* name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkLayerProperties> layers(n);
    if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
    for (const auto& l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

bool instance_extension_available(const char* name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> exts(n);
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data()) != VK_SUCCESS) return false;
    for (const auto& e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                     void*) {
    const hetero_log_level level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? HETERO_LOG_ERROR : HETERO_LOG_WARN;
    sdk::log(level, kProviderName, std::string("validation: ") + (data && data->pMessage ? data->pMessage : "(no message)"));
    return VK_FALSE;
}

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

}  // namespace

class VulkanProvider final : public sdk::Provider {
public:
    explicit VulkanProvider(const sdk::Options& options) {
        sdk::require_known_options(options, {"validation", "device", "portable", "gpu_kernels"}, kProviderName);
        validation_ = sdk::option_int(options, "validation", 0, 0, 1) == 1 || sdk::env_equals("HETERO_VK_VALIDATION", "1");
        only_ = sdk::option_int(options, "device", -1, -1, 1024);
        // portable=1 takes the paths for devices without optional features
        // (shared-memory reductions, re-recording on rebinding) so they stay tested.
        portable_ = sdk::option_int(options, "portable", 0, 0, 1) == 1;
        // gpu_kernels=1 gives CPU implementations the shaders meant for GPUs (to test them there).
        gpu_kernels_ = sdk::option_int(options, "gpu_kernels", 0, 0, 1) == 1;
    }

    ~VulkanProvider() override {
        devices_.clear();
        if (messenger_) {
            auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
            if (destroy) destroy(instance_, messenger_, nullptr);
        }
        if (instance_) vkDestroyInstance(instance_, nullptr);
    }

    uint32_t device_count() override { return uint32_t(devices().size()); }

    void device_props(uint32_t device, hetero_device_props& p) override {
        const DeviceInfo& d = devices()[device]->info();
        p.kind = d.kind;
        p.flags = d.flags;
        std::snprintf(p.name, sizeof(p.name), "%s", d.name.c_str());
        std::snprintf(p.driver, sizeof(p.driver), "%s", d.driver.c_str());
        p.memory_bytes = d.memory_bytes;
        p.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32) | HETERO_DTYPE_BIT(HETERO_DTYPE_F16) | HETERO_DTYPE_BIT(HETERO_DTYPE_BF16) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_Q8_0) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_0) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_K) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_K) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q6_K) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_1) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_0) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q5_1) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_IQ4_NL) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q2_K) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q3_K) |
                       HETERO_DTYPE_BIT(HETERO_DTYPE_E0M4);
        p.subgroup_size = d.subgroup_size;
        // Vulkan reports neither FLOPS nor bandwidth: hints where the device
        // type says enough, else 0 (unknown).
        fill_performance_hints(d, p);
    }

    void check_supported(uint32_t device, const hetero_node& node, const hetero_tensor_desc* tensors, uint32_t,
                         double* est_seconds) override {
        const DeviceInfo& d = devices()[device]->info();
        check_node_supported(d, node, tensors);
        if (est_seconds) {
            hetero_device_props props{};
            device_props(device, props);
            *est_seconds = estimate_seconds(d, props, node, tensors);
        }
    }

    std::unique_ptr<sdk::Buffer> alloc(uint32_t device, uint64_t size) override {
        return std::make_unique<DeviceBuffer>(devices()[device]->open(), device, size, MemoryUse::Device);
    }

    void* host_ptr(sdk::Buffer& b) override { return static_cast<DeviceBuffer&>(b).mapped(); }

    void write(sdk::Buffer& dst, uint64_t offset, const void* src, uint64_t size) override {
        devices()[dst.device()]->open().write(static_cast<DeviceBuffer&>(dst), offset, src, size);
    }

    void read(sdk::Buffer& src, uint64_t offset, void* dst, uint64_t size) override {
        devices()[src.device()]->open().read(static_cast<DeviceBuffer&>(src), offset, dst, size);
    }

    void copy(sdk::Buffer& src, uint64_t so, sdk::Buffer& dst, uint64_t d, uint64_t size) override {
        if (src.device() == dst.device()) {
            devices()[src.device()]->open().copy(static_cast<DeviceBuffer&>(src), so, static_cast<DeviceBuffer&>(dst), d, size);
            return;
        }
        std::vector<uint8_t> tmp(size);  // between two devices: through the host
        read(src, so, tmp.data(), size);
        write(dst, d, tmp.data(), size);
    }

    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants) override {
        return std::make_unique<VkExecutable>(devices()[device]->open(), device, std::move(graph), constants);
    }

    std::unique_ptr<sdk::Event> execute(sdk::Executable& exe, const std::vector<sdk::BoundTensor>& bound, bool want_event) override {
        return static_cast<VkExecutable&>(exe).execute(bound, want_event);
    }

private:
    // The usable devices, discovered once by the first caller (thread-safe);
    // throws the reason when there are none.
    const std::vector<std::unique_ptr<LazyDevice>>& devices() {
        discovery_.run([this] { discover(); });
        return devices_;
    }

    void discover() {
        open_instance(validation_);
        std::string skipped;
        for (VkPhysicalDevice phys : physical_devices()) add_device(phys, skipped);
        if (devices_.empty())
            sdk::fail(HETERO_ERR_UNSUPPORTED, "no usable Vulkan device" + (skipped.empty() ? std::string(" (the loader reported none)") : " (" + skipped + ")"));
    }

    std::vector<VkPhysicalDevice> physical_devices() {
        uint32_t n = 0;
        check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
        std::vector<VkPhysicalDevice> phys(n);
        check(vkEnumeratePhysicalDevices(instance_, &n, phys.data()), "vkEnumeratePhysicalDevices");
        phys.resize(n);
        if (only_ >= int64_t(n))
            sdk::fail(HETERO_ERR_UNSUPPORTED, "no Vulkan device " + std::to_string(only_) + " (option 'device'; the loader reports " + std::to_string(n) + ")");
        if (only_ >= 0) phys = {phys[size_t(only_)]};
        return phys;
    }

    // Lists `phys` when the provider can use it; otherwise says why in `skipped`.
    void add_device(VkPhysicalDevice phys, std::string& skipped) {
        DeviceInfo info = describe(instance_, phys);
        if (portable_) info.subgroup_arithmetic = info.update_after_bind = info.coopmat_f16 = false;
        info.compact_kernels = info.kind == HETERO_DEVICE_CPU && !gpu_kernels_;
        if (const std::string why = unusable_reason(info); !why.empty()) {
            sdk::log(HETERO_LOG_WARN, kProviderName, info.name + ": skipped, " + why);
            skipped += (skipped.empty() ? "" : "; ") + info.name + ": " + why;
            return;
        }
        devices_.push_back(std::make_unique<LazyDevice>(info, uint32_t(devices_.size())));
    }

    // Creates instance_ (and the validation messenger); throws when the loader
    // or the drivers cannot give one.
    void open_instance(bool validation) {
        uint32_t version = VK_API_VERSION_1_0;
        if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2)
            sdk::fail(HETERO_ERR_UNSUPPORTED, "the Vulkan loader is older than 1.2");
        std::vector<const char*> layers, extensions;
        if (validation) {
            if (layer_available(kValidationLayer)) {
                layers.push_back(kValidationLayer);
                if (instance_extension_available(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
            } else {
                sdk::log(HETERO_LOG_WARN, kProviderName, "validation requested but VK_LAYER_KHRONOS_validation is not installed");
            }
        }
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "hetero";
        app.pEngineName = "hetero-ep-vulkan";
        app.apiVersion = VK_API_VERSION_1_2;
        VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mi.pfnUserCallback = &on_validation_message;
        VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        ci.pApplicationInfo = &app;
        ci.enabledLayerCount = uint32_t(layers.size());
        ci.ppEnabledLayerNames = layers.data();
        ci.enabledExtensionCount = uint32_t(extensions.size());
        ci.ppEnabledExtensionNames = extensions.data();
        if (!extensions.empty()) ci.pNext = &mi;  // also covers instance creation itself
        const VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
        if (r != VK_SUCCESS) {
            instance_ = VK_NULL_HANDLE;
            sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("vkCreateInstance failed: ") + result_name(r) +
                                                  (r == VK_ERROR_INCOMPATIBLE_DRIVER ? "; no Vulkan 1.2 driver (ICD) is installed or loadable" : ""));
        }
        if (!extensions.empty()) {
            auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
            if (create) create(instance_, &mi, nullptr, &messenger_);
        }
    }

    bool validation_ = false, portable_ = false, gpu_kernels_ = false;
    int64_t only_ = -1;  // option 'device': the one physical device to use, -1 = all
    sdk::DiscoverOnce discovery_;
    // Written once, by discovery_.
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    std::vector<std::unique_ptr<LazyDevice>> devices_;
};

}  // namespace hetero::vk

HETERO_SDK_EXPORT_PROVIDER(hetero::vk::VulkanProvider, "vulkan", "0.1.0", nullptr)
