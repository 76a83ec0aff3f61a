#include "attention_programs.hpp"

#include "program_recipes.hpp"

namespace hetero::opencl {
namespace {

// "head dims 65-96" for the instance of padded head dim 96.
std::string head_dim_range(const MmaAttentionKernel& kernel) {
    const int64_t first = &kernel == kMmaAttentionKernels ? 1 : (&kernel - 1)->head_dim + 1;
    return "head dims " + std::to_string(first) + "-" + std::to_string(kernel.head_dim);
}

}  // namespace

AttentionPrograms::Slot& AttentionPrograms::slot(const MmaAttentionKernel& kernel) {
    return const_cast<Slot&>(static_cast<const AttentionPrograms*>(this)->slot(kernel));
}

const AttentionPrograms::Slot& AttentionPrograms::slot(const MmaAttentionKernel& kernel) const {
    const std::ptrdiff_t i = &kernel - kMmaAttentionKernels;
    if (i < 0 || size_t(i) >= slots_.size()) sdk::fail(HETERO_ERR_INTERNAL, std::string(kernel.name) + " is not an entry of kMmaAttentionKernels");
    return slots_[size_t(i)];
}

const Program* AttentionPrograms::get(const Target& target, const MmaAttentionKernel& kernel, int64_t head_dim) {
    Slot& s = slot(kernel);
    if (s.failed.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.program) return s.program.get();
    if (s.failed.load(std::memory_order_relaxed)) return nullptr;
    try {
        s.program = build_program_from(attention_recipe(target.info, kernel, target.ptx), target.context, target.info, target.device,
                                       target.cache_dir);
    } catch (const sdk::Error& e) {
        s.failed.store(true, std::memory_order_release);
        sdk::log(HETERO_LOG_WARN, "opencl",
                 target.info.name + ": the tensor-core attention " + kernel.name + " (" + head_dim_range(kernel) + ") did not build for head dim " +
                     std::to_string(head_dim) + "; prefill attention at those head dims takes the generic kernels: " + e.what());
        return nullptr;
    }
    return s.program.get();
}

double AttentionPrograms::seconds_until_ready(const DeviceInfo& info, const MmaAttentionKernel& kernel, bool ptx, const std::string& cache_dir) {
    Slot& s = slot(kernel);
    if (s.failed.load(std::memory_order_acquire)) return 0.0;
    {
        std::unique_lock<std::mutex> lock(s.mutex, std::try_to_lock);
        if (lock.owns_lock() && s.program) return 0.0;
    }
    return seconds_to_build(attention_recipe(info, kernel, ptx), program_device_key(info), cache_dir);
}

bool AttentionPrograms::failed(const MmaAttentionKernel& kernel) const { return slot(kernel).failed.load(std::memory_order_acquire); }

}  // namespace hetero::opencl
