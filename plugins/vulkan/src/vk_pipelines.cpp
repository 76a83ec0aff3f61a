#include "vk_pipelines.hpp"

#include "vk_shaders.hpp"

#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#define HETERO_VK_DECLARE(name)                  \
    extern const uint32_t hetero_spv_##name[];   \
    extern const size_t hetero_spv_##name##_words;
HETERO_VK_SHADERS(HETERO_VK_DECLARE)
#undef HETERO_VK_DECLARE

namespace hetero::vk {

ShaderCode shader_code(std::string_view name) {
#define HETERO_VK_LOOKUP(n) \
    if (name == #n) return ShaderCode{hetero_spv_##n, hetero_spv_##n##_words};
    HETERO_VK_SHADERS(HETERO_VK_LOOKUP)
#undef HETERO_VK_LOOKUP
    sdk::fail(HETERO_ERR_INTERNAL, "vulkan: no embedded shader named '" + std::string(name) + "'");
}

std::string pipeline_cache_path(const uint8_t (&uuid)[VK_UUID_SIZE], uint32_t driver_version) {
    const std::string dir = sdk::user_cache_dir("vulkan");
    if (dir.empty()) return {};
    char name[2 * VK_UUID_SIZE + 32];
    for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(name + 2 * i, 3, "%02x", uuid[i]);
    std::snprintf(name + 2 * VK_UUID_SIZE, 32, "-%08x.bin", driver_version);
    return dir + "/" + name;
}

namespace {

// The driver validates its own cache blob too; this check only keeps a
// truncated or foreign file from reaching it.
bool cache_header_ok(const std::vector<char>& blob, const uint8_t (&uuid)[VK_UUID_SIZE]) {
    if (blob.size() < 16 + VK_UUID_SIZE) return false;
    uint32_t header_len = 0, version = 0;
    std::memcpy(&header_len, blob.data(), 4);
    std::memcpy(&version, blob.data() + 4, 4);
    return header_len >= 16 + VK_UUID_SIZE && header_len <= blob.size() &&
           version == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && std::memcmp(blob.data() + 16, uuid, VK_UUID_SIZE) == 0;
}

}  // namespace

Pipelines::Pipelines(VkDevice dev, const uint8_t (&uuid)[VK_UUID_SIZE], uint32_t driver_version, bool update_after_bind)
    : dev_(dev), cache_path_(pipeline_cache_path(uuid, driver_version)) {
    std::vector<char> blob;
    if (!cache_path_.empty()) {
        std::ifstream in(cache_path_, std::ios::binary);
        if (in) blob.assign(std::istreambuf_iterator<char>(in), {});
        if (!cache_header_ok(blob, uuid)) blob.clear();
    }
    VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ci.initialDataSize = blob.size();
    ci.pInitialData = blob.empty() ? nullptr : blob.data();
    if (vkCreatePipelineCache(dev_, &ci, nullptr, &cache_) != VK_SUCCESS) {
        // A corrupted cache must not stop the provider: start empty.
        ci.initialDataSize = 0;
        ci.pInitialData = nullptr;
        check(vkCreatePipelineCache(dev_, &ci, nullptr, &cache_), "vkCreatePipelineCache");
    }

    VkDescriptorSetLayoutBinding bindings[kOperandBindings + 1];
    VkDescriptorBindingFlags flags[kOperandBindings + 1];
    for (uint32_t i = 0; i <= kOperandBindings; ++i) {
        bindings[i] = VkDescriptorSetLayoutBinding{i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
        flags[i] = update_after_bind ? VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT : 0;
    }
    VkDescriptorSetLayoutBindingFlagsCreateInfo fi{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO};
    fi.bindingCount = kOperandBindings + 1;
    fi.pBindingFlags = flags;
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.pNext = update_after_bind ? &fi : nullptr;
    li.flags = update_after_bind ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT : 0;
    li.bindingCount = kOperandBindings + 1;
    li.pBindings = bindings;
    check(vkCreateDescriptorSetLayout(dev_, &li, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    VkPipelineLayoutCreateInfo pi{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pi.setLayoutCount = 1;
    pi.pSetLayouts = &set_layout_;
    pi.pushConstantRangeCount = 1;
    pi.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(dev_, &pi, nullptr, &layout_), "vkCreatePipelineLayout");
}

Pipelines::~Pipelines() {
    save_cache();
    for (auto& [k, p] : pipelines_) vkDestroyPipeline(dev_, p, nullptr);
    for (auto& [k, m] : modules_) vkDestroyShaderModule(dev_, m, nullptr);
    if (layout_) vkDestroyPipelineLayout(dev_, layout_, nullptr);
    if (set_layout_) vkDestroyDescriptorSetLayout(dev_, set_layout_, nullptr);
    if (cache_) vkDestroyPipelineCache(dev_, cache_, nullptr);
}

void Pipelines::save_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!dirty_ || cache_path_.empty() || !cache_) return;
    size_t size = 0;
    if (vkGetPipelineCacheData(dev_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> blob(size);
    if (vkGetPipelineCacheData(dev_, cache_, &size, blob.data()) != VK_SUCCESS) return;
    // Written beside it, then renamed: a crash, or another process saving
    // the same cache, never leaves a half-written cache behind.
    std::error_code ec;
    const std::filesystem::path path(cache_path_);
    std::filesystem::create_directories(path.parent_path(), ec);
    if (sdk::write_file_atomically(path.string(), std::string_view(blob.data(), size)).empty()) dirty_ = false;
}

VkShaderModule Pipelines::module(const std::string& shader) {
    auto it = modules_.find(shader);
    if (it != modules_.end()) return it->second;
    const ShaderCode code = shader_code(shader);
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = code.count * 4;
    ci.pCode = code.words;
    VkShaderModule m = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(dev_, &ci, nullptr, &m);
    if (r != VK_SUCCESS) sdk::fail(HETERO_ERR_COMPILE_FAILED, "vulkan: shader module '" + shader + "' rejected: " + result_name(r));
    modules_[shader] = m;
    return m;
}

VkPipeline Pipelines::build(VkShaderModule module, const std::string& shader, const std::vector<uint32_t>& spec) const {
    std::vector<VkSpecializationMapEntry> entries(spec.size());
    for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = VkSpecializationMapEntry{i, i * 4, 4};
    VkSpecializationInfo si{uint32_t(entries.size()), entries.data(), spec.size() * 4, spec.data()};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = VkPipelineShaderStageCreateInfo{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
    ci.layout = layout_;
    VkPipeline p = VK_NULL_HANDLE;
    VkResult r = vkCreateComputePipelines(dev_, cache_, 1, &ci, nullptr, &p);
    if (r != VK_SUCCESS)
        sdk::fail(r == VK_ERROR_DEVICE_LOST ? HETERO_ERR_DEVICE_LOST : HETERO_ERR_COMPILE_FAILED,
                  "vulkan: building pipeline '" + shader + "' failed: " + result_name(r));
    return p;
}

VkPipeline Pipelines::get(const std::string& shader, const std::vector<uint32_t>& spec) { return get_all({Key{shader, spec}}).at(0); }

std::vector<VkPipeline> Pipelines::get_all(const std::vector<Key>& keys) {
    struct Job { Key key; VkShaderModule module; VkPipeline made = VK_NULL_HANDLE; std::string error; hetero_status status = HETERO_OK; };
    std::vector<Job> jobs;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Key& k : keys)
            if (!pipelines_.count(k) && std::none_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.key == k; }))
                jobs.push_back(Job{k, module(k.first)});
    }
    // Two builders already halve a cold start; more only where cores allow.
    const size_t threads = std::min<size_t>(jobs.size(), std::max(2u, std::min(8u, std::thread::hardware_concurrency())));
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
            try {
                jobs[i].made = build(jobs[i].module, jobs[i].key.first, jobs[i].key.second);
            } catch (const sdk::Error& e) {
                jobs[i].status = e.status();
                jobs[i].error = e.what();
            } catch (const std::exception& e) {
                jobs[i].status = HETERO_ERR_INTERNAL;
                jobs[i].error = std::string("vulkan: building pipeline '") + jobs[i].key.first + "': " + e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();

    std::lock_guard<std::mutex> lock(mu_);
    const Job* failed = nullptr;
    for (Job& j : jobs) {
        if (!j.made) {
            if (!failed) failed = &j;
            continue;
        }
        // Another caller may have built the same key meanwhile: keep one.
        auto [it, inserted] = pipelines_.emplace(j.key, j.made);
        if (!inserted) vkDestroyPipeline(dev_, j.made, nullptr);
        dirty_ = true;
    }
    if (failed) sdk::fail(failed->status, failed->error);
    std::vector<VkPipeline> out;
    out.reserve(keys.size());
    for (const Key& k : keys) out.push_back(pipelines_.at(k));
    return out;
}

}  // namespace hetero::vk
