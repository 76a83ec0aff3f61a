// One Vulkan physical device: its properties as the ABI reports them
// (DeviceInfo, read when the provider discovers its devices) and, opened for compute on
// first use (LazyDevice), the logical device and queue, a timeline semaphore
// that orders every submission, the memory allocator, the pipelines, and the
// blocking buffer transfers.
#pragma once

#include "vk_common.hpp"
#include "vk_memory.hpp"
#include "vk_pipelines.hpp"

#include <atomic>
#include <memory>
#include <mutex>
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

class Device;

// A VkBuffer carved out of the allocator: the provider's buffer handle.
class DeviceBuffer final : public sdk::Buffer {
public:
    DeviceBuffer(Device& dev, uint32_t index, uint64_t size, MemoryUse use);
    ~DeviceBuffer() override;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    VkBuffer handle() const { return buffer_; }
    uint8_t* mapped() const { return alloc_.mapped; }
    uint64_t id() const { return id_; }

private:
    Device& dev_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    Allocation alloc_;
    uint64_t id_;
};

class Device {
public:
    Device(const DeviceInfo& info, uint32_t index);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const DeviceInfo& info() const { return info_; }
    uint32_t index() const { return index_; }
    VkDevice handle() const { return dev_; }
    uint32_t queue_family() const { return family_; }
    MemoryAllocator& memory() { return *memory_; }
    Pipelines& pipelines() { return *pipelines_; }

    // Submits `cb` after everything submitted before; returns the timeline
    // value that signals its completion. Thread-safe.
    uint64_t submit(VkCommandBuffer cb);
    void wait(uint64_t value);
    bool reached(uint64_t value);
    // Waits for every submission so far (host access to device memory).
    void wait_all();
    // Submits recorded small writes now and, with `wait`, waits for them
    // (before a buffer they may target goes away).
    void flush_writes(bool wait = false);

    // Small writes are recorded (vkCmdUpdateBuffer) and go to the GPU with the
    // next submission instead of a blocking round trip of their own.
    void write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size);
    void read(DeviceBuffer& src, uint64_t offset, void* dst, uint64_t size);
    void copy(DeviceBuffer& src, uint64_t src_offset, DeviceBuffer& dst, uint64_t dst_offset, uint64_t size);

private:
    void release() noexcept;
    // Runs `record` in a one-off command buffer and waits for it.
    template <class F>
    void run_transfer(F&& record);

    DeviceInfo info_;
    uint32_t index_;
    VkDevice dev_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::mutex submit_mu_;
    uint64_t last_value_ = 0;

    // Recorded small writes: a ring of command buffers, each reusable once
    // the timeline passes the value of its last submission.
    struct PendingCb { VkCommandBuffer cb = VK_NULL_HANDLE; uint64_t done_at = 0; };
    std::mutex pending_mu_;  // taken before submit_mu_
    VkCommandPool pending_pool_ = VK_NULL_HANDLE;
    std::vector<PendingCb> pending_ring_;
    size_t pending_next_ = 0;
    VkCommandBuffer pending_ = VK_NULL_HANDLE;  // open, holding unsubmitted writes
    bool record_small_write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size);
    // Closes the open write buffer; returns it (or null). Call with pending_mu_ held.
    VkCommandBuffer close_pending();
    uint64_t submit_locked(VkCommandBuffer cb);

    std::mutex transfer_mu_;
    VkCommandPool transfer_pool_ = VK_NULL_HANDLE;
    VkCommandBuffer transfer_cb_ = VK_NULL_HANDLE;
    std::unique_ptr<DeviceBuffer> staging_;

    std::unique_ptr<MemoryAllocator> memory_;
    std::unique_ptr<Pipelines> pipelines_;
};

// A device as the provider lists it: described at discovery, opened (VkDevice,
// queue, allocator, pipeline cache...) by the first call that needs it, so
// listing devices stays cheap. Thread-safe.
class LazyDevice {
public:
    LazyDevice(const DeviceInfo& info, uint32_t index) : info_(info), index_(index) {}
    LazyDevice(const LazyDevice&) = delete;
    LazyDevice& operator=(const LazyDevice&) = delete;

    const DeviceInfo& info() const { return info_; }
    // The opened device; the first call creates it. A failure throws
    // sdk::Error and leaves the device closed, so a later call tries again.
    Device& open();

private:
    DeviceInfo info_;
    uint32_t index_;
    std::mutex open_mu_;
    std::atomic<Device*> opened_{nullptr};  // set once `device_` is complete
    std::unique_ptr<Device> device_;
};

}  // namespace hetero::vk
