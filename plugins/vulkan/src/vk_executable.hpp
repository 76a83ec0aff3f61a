// A compiled subgraph: pipelines, internal tensors placed by a static memory
// plan in one arena, one descriptor set per dispatch, and a command buffer
// recorded once. execute() rewrites only the descriptors of bound tensors
// whose buffer or offset changed, then re-submits.
//
//   vk_executable.cpp  compiling: lowering every node, memory, barriers, descriptor sets
//   vk_run.cpp         placing tensors, recording, execute() and its event
#pragma once

#include "vk_device.hpp"
#include "vk_lowering.hpp"
#include "vk_profile.hpp"

#include <hetero/sdk/host_memory.hpp>

#include <chrono>
#include <memory>
#include <mutex>

namespace hetero::vk {

// Words of the meta buffer's header (shaders/common.glsl, Meta): err_code,
// err_node, err_value, pad.
inline constexpr uint32_t kMetaHeaderWords = 4;

// State shared by an executable and the events of its runs (an event may be
// waited on after the executable is gone).
struct RunState {
    uint64_t value = 0;
    std::chrono::steady_clock::time_point submitted;
    bool finished = false;
    hetero_status status = HETERO_OK;
    std::string message;
};

struct ExecShared {
    Device& dev;
    std::mutex mu;
    std::unique_ptr<DeviceBuffer> meta;      // error flag + per-tensor byte offsets
    std::vector<std::string> node_names;     // for error messages
    std::shared_ptr<RunState> last;
    std::unique_ptr<DispatchProfiler> profiler;  // HETERO_VK_PROFILE=1 only

    explicit ExecShared(Device& d) : dev(d) {}
    // Waits for `run` and collects its error flag; call with `mu` held.
    void finish(RunState& run);
};

class VkEvent final : public sdk::Event {
public:
    VkEvent(std::shared_ptr<ExecShared> s, std::shared_ptr<RunState> r) : shared_(std::move(s)), run_(std::move(r)) {}
    void wait() override;

private:
    std::shared_ptr<ExecShared> shared_;
    std::shared_ptr<RunState> run_;
};

class VkExecutable final : public sdk::Executable {
public:
    VkExecutable(Device& dev, uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants);
    ~VkExecutable() override;
    std::unique_ptr<sdk::Event> execute(const std::vector<sdk::BoundTensor>& bound, bool want_event);

private:
    struct Slot {  // where a tensor lives, as a descriptor sees it
        VkBuffer buffer = VK_NULL_HANDLE;
        uint64_t buffer_id = 0;
        uint64_t offset = ~uint64_t(0);  // bound offset (cache key with buffer_id)
        VkDeviceSize desc_offset = 0, desc_range = 0;
        uint32_t rem = 0;  // offset - desc_offset: pushed to the shaders
    };
    // Compiling (vk_executable.cpp), in this order.
    void check_nodes();
    // Fills dispatches_ (node groups and residual ADDs fused); returns the
    // plan of the internal tensors.
    sdk::MemoryPlan lower_graph();
    void place_tensors(const sdk::MemoryPlan& plan, const std::vector<sdk::BoundTensor>& constants);
    void create_descriptor_sets();
    void create_command_buffer();

    // Returns true when the tensor's in-range offset changed (push constants must be re-recorded).
    bool place(uint32_t tensor, const DeviceBuffer& buf, uint64_t offset);
    void write_descriptors(const std::vector<bool>& tensors);
    void record();
    void release() noexcept;

    Device& dev_;
    std::shared_ptr<ExecShared> shared_;
    std::vector<Dispatch> dispatches_;
    std::vector<VkPipeline> pipelines_;
    std::vector<bool> barrier_before_;
    std::vector<Slot> slots_;
    std::unique_ptr<DeviceBuffer> arena_;       // internal tensors, then the scratch area
    uint64_t scratch_offset_ = 0, scratch_bytes_ = 0;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorSet> sets_;
    VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    bool recorded_ = false;
};

}  // namespace hetero::vk
