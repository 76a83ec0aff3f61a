#include "cl_executable.hpp"

#include "cl_util.hpp"

#include <hetero/sdk/host_memory.hpp>

#include <algorithm>
#include <utility>

namespace hetero::opencl {

ClExecutable::ClExecutable(uint32_t device_index, ClDevice& device, const Program& program, sdk::Graph graph,
                           const std::vector<sdk::BoundTensor>& constants)
    : sdk::Executable(device_index, std::move(graph)), device_(device) {
    const sdk::Graph& g = this->graph();
    const Fusions fusions = find_fusions(g, [&](uint32_t wtype) { return matvec_rows(program, wtype); });
    const sdk::MemoryPlan plan = sdk::plan_internal_memory(fusions.planned);
    memory_.offset = plan.offset;
    cl_int err = CL_SUCCESS;
    const uint64_t arena = std::max<uint64_t>(plan.arena_bytes, sdk::kHostAlign);
    if (arena > device.info().max_alloc && device.info().max_alloc)
        sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "internal tensors need " + std::to_string(arena) + " bytes, more than the device's largest allocation (" +
                                                std::to_string(device.info().max_alloc) + ")");
    memory_.arena = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, arena, nullptr, &err);
    cl_check(err, "allocating the internal-tensor arena", HETERO_ERR_OUT_OF_MEMORY);
    sdk::log(HETERO_LOG_DEBUG, "opencl",
             device.info().name + ": executable of " + std::to_string(g.nodes.size()) + " nodes, internal tensors " + std::to_string(arena >> 20) + " MiB");
    memory_.error_flag = clCreateBuffer(device.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof kFlagInit,
                                        const_cast<cl_int*>(kFlagInit), &err);
    if (err != CL_SUCCESS) {
        release();
        cl_check(err, "allocating the error flag", HETERO_ERR_OUT_OF_MEMORY);
    }

    try {
        for (size_t t = 0; t < g.tensors.size(); ++t)
            if (g.tensors[t].kind == HETERO_TENSOR_CONSTANT) check_alignment(g.tensors[t], uint32_t(t), constants[t].offset);
        if (const uint64_t bytes = x16_bytes(g, fusions, program); bytes > 0) {
            memory_.x16 = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
            cl_check(err, "allocating the f16 activations of the tensor-core GEMMs", HETERO_ERR_OUT_OF_MEMORY);
        }
        auto ops = std::make_shared<std::vector<uint32_t>>();
        for (const hetero_node& node : g.nodes) ops->push_back(node.op);
        Lowering lowering(g, constants, device, program, memory_);
        for (size_t n = 0; n < g.nodes.size(); ++n) lowering.lower(uint32_t(n), fusions);
        launches_ = std::move(lowering.launches());
        planar_ = std::move(lowering.weight_copies());
        node_ops_ = std::move(ops);
        if (profiling_enabled()) {
            std::vector<std::string> labels;
            std::vector<uint64_t> bytes;
            for (const Launch& l : launches_) {
                labels.push_back(l.label);
                bytes.push_back(l.bytes);
            }
            times_ = std::make_unique<sdk::DispatchTimes>("opencl", std::move(labels), std::move(bytes));
        }
    } catch (...) {
        release();
        throw;
    }
}

ClExecutable::~ClExecutable() {
    // Kernels may still be queued; let them finish before their memory goes.
    clFinish(device_.queue());
    if (times_) times_->report();
    release();
}

void ClExecutable::release() {
    launches_.clear();  // releases the kernels
    if (memory_.arena) clReleaseMemObject(memory_.arena);
    if (memory_.error_flag) clReleaseMemObject(memory_.error_flag);
    if (memory_.x16) clReleaseMemObject(memory_.x16);
    memory_.arena = memory_.error_flag = memory_.x16 = nullptr;
}

}  // namespace hetero::opencl
