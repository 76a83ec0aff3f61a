// Compute pipelines built from the embedded SPIR-V: one descriptor layout
// (meta buffer + five operands) and one push-constant block shared by every
// shader, pipelines cached per (shader, specialization constants), and a
// VkPipelineCache persisted on disk per device UUID and driver version.
#pragma once

#include "vk_common.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace hetero::vk {

// Mirrors `Push` in shaders/common.glsl.
struct PushConstants {
    uint32_t node = 0;
    uint32_t tensor[8] = {};  // in0..in3, out0..out2, in4: byte offset inside the descriptor range
    uint32_t u[16] = {};
    float f[4] = {};
};
static_assert(sizeof(PushConstants) == 116, "push constants must match shaders/common.glsl");

// Bindings 1..8 (binding 0 is the meta buffer): inputs 0..3, outputs 0..2
// (only multi-matvec dispatches write more than one), then input 4 (the
// norm weight of a multi-matvec with a fused RMSNorm).
inline constexpr uint32_t kOperandBindings = 8;
inline constexpr uint32_t kFirstOutput = 4, kOutputs = 3;
inline constexpr bool is_output_operand(uint32_t b) { return b >= kFirstOutput && b < kFirstOutput + kOutputs; }

// The file the pipeline cache of a device (pipelineCacheUUID, driver
// version) persists in: $XDG_CACHE_HOME/hetero/vulkan/..., else
// ~/.cache/hetero/vulkan/...; "" when neither variable is set.
std::string pipeline_cache_path(const uint8_t (&uuid)[VK_UUID_SIZE], uint32_t driver_version);

class Pipelines {
public:
    Pipelines(VkDevice dev, const uint8_t (&uuid)[VK_UUID_SIZE], uint32_t driver_version, bool update_after_bind);
    ~Pipelines();
    Pipelines(const Pipelines&) = delete;
    Pipelines& operator=(const Pipelines&) = delete;

    using Key = std::pair<std::string, std::vector<uint32_t>>;
    VkPipeline get(const std::string& shader, const std::vector<uint32_t>& spec);
    // The pipelines of `keys`, in order; the missing ones are built on
    // several threads at once (driver compilers are slow at first start).
    std::vector<VkPipeline> get_all(const std::vector<Key>& keys);
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    VkPipelineLayout layout() const { return layout_; }
    // Writes the pipeline cache to disk (also done at destruction).
    void save_cache();

private:
    VkShaderModule module(const std::string& shader);
    // Builds one pipeline (no lock held: pipeline caches are internally synchronized).
    VkPipeline build(VkShaderModule module, const std::string& shader, const std::vector<uint32_t>& spec) const;

    VkDevice dev_;
    std::string cache_path_;
    VkPipelineCache cache_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::mutex mu_;
    std::map<std::string, VkShaderModule> modules_;
    std::map<Key, VkPipeline> pipelines_;
    bool dirty_ = false;
};

}  // namespace hetero::vk
