// A compiled subgraph on one OpenCL device: a kernel launch per node or
// fused group of nodes (cl_lowering.hpp) with its arguments set once at
// compile time, internal tensors in one device arena laid out by the SDK's
// static memory plan, and a small error-flag buffer the kernels raise on
// out-of-range ids or positions. run() (cl_run.cpp) sets the arguments of
// bound tensors that changed and enqueues every launch.
#pragma once

#include "cl_device.hpp"
#include "cl_lowering.hpp"

#include <hetero/sdk/dispatch_profile.hpp>
#include <hetero/sdk/provider.hpp>

#include <array>
#include <chrono>
#include <climits>
#include <memory>
#include <vector>

namespace hetero::opencl {

// The error flag's initial value and the bits kernels set in its first word
// (the second takes the smallest node that raised it; kernels/common.cl).
inline constexpr cl_int kFlagInit[4] = {0, INT_MAX, 0, 0};
inline constexpr cl_int kErrIdRange = 1, kErrPosRange = 2;

class ClExecutable final : public sdk::Executable {
public:
    ClExecutable(uint32_t device_index, ClDevice& device, const Program& program, sdk::Graph graph,
                 const std::vector<sdk::BoundTensor>& constants);
    ~ClExecutable() override;
    ClExecutable(const ClExecutable&) = delete;
    ClExecutable& operator=(const ClExecutable&) = delete;

    // Enqueues every launch; returns an event, or nullptr after waiting when
    // `want_event` is false.
    std::unique_ptr<sdk::Event> run(const std::vector<sdk::BoundTensor>& bound, bool want_event);

private:
    void release();
    // Runs the enqueued kernels to completion and adds their times to times_.
    void collect_times(const std::vector<cl_event>& events, std::chrono::steady_clock::time_point started);

    ClDevice& device_;
    LaunchMemory memory_;
    std::vector<Launch> launches_;
    std::shared_ptr<const std::vector<uint32_t>> node_ops_;  // op of each node, for error messages
    std::unique_ptr<sdk::DispatchTimes> times_;              // HETERO_CL_PROFILE=1 only
    std::vector<std::shared_ptr<const PlanarWeights>> planar_;  // copies of weights the launches read
};

// Completion of one execution: waits on the read-back of the error flag that
// follows the last kernel, then reports what the kernels flagged.
class ClEvent final : public sdk::Event {
public:
    // `slots`: where the flag is read to when one is free (pinned), else into the event.
    ClEvent(cl_command_queue queue, cl_mem flag, std::shared_ptr<const std::vector<uint32_t>> node_ops, PinnedFlagSlots& slots,
            cl_context context);
    ~ClEvent() override;
    ClEvent(const ClEvent&) = delete;
    ClEvent& operator=(const ClEvent&) = delete;
    void wait() override;
    // Host memory the flag is read into; `ev` is that read's completion.
    cl_int* flag_storage() { return flag_; }
    void set_event(cl_event ev) { event_ = ev; }

private:
    cl_event event_ = nullptr;
    cl_command_queue queue_;
    cl_mem flag_mem_;
    std::shared_ptr<const std::vector<uint32_t>> node_ops_;
    PinnedFlagSlots& slots_;
    cl_int* pinned_ = nullptr;            // a pinned slot, or null
    std::array<cl_int, 4> own_flag_{};    // the storage without one
    cl_int* flag_ = own_flag_.data();
    bool done_ = false;
};

}  // namespace hetero::opencl
