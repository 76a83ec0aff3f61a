// Running an executable: the arguments of bound tensors that changed since
// the last run, the enqueue of every launch, the read-back of the error flag
// that completes it (ClEvent), and the kernel times of HETERO_CL_PROFILE=1.
#include "cl_buffer.hpp"
#include "cl_executable.hpp"
#include "cl_util.hpp"

#include <algorithm>
#include <cstring>

namespace hetero::opencl {

std::unique_ptr<sdk::Event> ClExecutable::run(const std::vector<sdk::BoundTensor>& bound, bool want_event) {
    const auto& T = graph().tensors;
    for (size_t t = 0; t < T.size(); ++t)
        if (T[t].kind == HETERO_TENSOR_BOUND) check_alignment(T[t], uint32_t(t), bound[t].offset);
    cl_command_queue q = device_.queue();
    std::vector<cl_event> timed;
    const auto started = std::chrono::steady_clock::now();
    for (size_t li = 0; li < launches_.size(); ++li) {
        Launch& l = launches_[li];
        const cl_kernel kernel = l.kernel.get();
        // Only bound tensors change between executions; skip unchanged args.
        bool params_changed = false;
        for (BoundArg& a : l.bound) {
            const sdk::BoundTensor& b = bound[a.tensor];
            const cl_mem mem = cl_buffer(b.buffer).mem();
            if (mem != a.last_mem) {
                set_arg(kernel, a.arg, mem);
                a.last_mem = mem;
            }
            if (const cl_ulong offset = cl_buffer(b.buffer).base() + b.offset; offset != a.last_offset) {
                if (a.param_offset >= 0) {
                    std::memcpy(l.params.data() + a.param_offset, &offset, sizeof offset);
                    params_changed = true;
                } else {
                    set_arg(kernel, a.arg + 1, offset);
                }
                a.last_offset = offset;
            }
        }
        if (params_changed) set_arg_bytes(kernel, l.params_arg, l.params.size(), l.params.data());
        cl_event* ev = nullptr;
        if (times_) ev = &timed.emplace_back();
        const cl_int err = clEnqueueNDRangeKernel(q, kernel, l.dims, nullptr, l.global, l.local, 0, nullptr, ev);
        if (err != CL_SUCCESS) {
            for (BoundArg& a : l.bound) a.last_mem = nullptr;  // re-set everything next time
            for (cl_event e : timed)
                if (e) clReleaseEvent(e);
            cl_check(err, "clEnqueueNDRangeKernel", err == CL_OUT_OF_RESOURCES ? HETERO_ERR_DEVICE_LOST : HETERO_ERR_INTERNAL);
        }
        // Hand the first kernel to the device at once, and a few more soon
        // after, so it computes while the host enqueues the rest (~5 us per
        // enqueue on NVIDIA) instead of waiting for the final flush.
        if (li == 0 || li == 8) clFlush(q);
    }
    if (times_) collect_times(timed, started);
    auto ev = std::make_unique<ClEvent>(q, memory_.error_flag, node_ops_, device_.flag_slots(), device_.context());
    cl_event done = nullptr;
    cl_check(clEnqueueReadBuffer(q, memory_.error_flag, CL_FALSE, 0, sizeof kFlagInit, ev->flag_storage(), 0, nullptr, &done),
             "reading the error flag", HETERO_ERR_DEVICE_LOST);
    ev->set_event(done);
    clFlush(q);
    if (want_event) return ev;
    ev->wait();
    return nullptr;
}

void ClExecutable::collect_times(const std::vector<cl_event>& events, std::chrono::steady_clock::time_point started) {
    clFinish(device_.queue());
    const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
    std::vector<double> us(events.size());
    cl_ulong first = ~cl_ulong(0), last = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        cl_ulong a = 0, b = 0;
        clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof a, &a, nullptr);
        clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr);
        us[i] = double(b - a) * 1e-3;
        first = std::min(first, a);
        last = std::max(last, b);
        clReleaseEvent(events[i]);
    }
    times_->add_run(us, events.empty() ? 0.0 : double(last - first) * 1e-3, host_us);
}

ClEvent::ClEvent(cl_command_queue queue, cl_mem flag, std::shared_ptr<const std::vector<uint32_t>> node_ops, PinnedFlagSlots& slots,
                 cl_context context)
    : queue_(queue), flag_mem_(flag), node_ops_(std::move(node_ops)), slots_(slots), pinned_(slots.acquire(context, queue)) {
    if (pinned_) flag_ = pinned_;
    clRetainMemObject(flag_mem_);
}

ClEvent::~ClEvent() {
    // The flag is read into this object; it must land before the memory goes.
    if (event_) {
        clWaitForEvents(1, &event_);
        clReleaseEvent(event_);
    }
    if (pinned_) slots_.release(pinned_);
    clReleaseMemObject(flag_mem_);
}

void ClEvent::wait() {
    if (done_ || !event_) return;
    const cl_int err = clWaitForEvents(1, &event_);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    done_ = true;
    if (err != CL_SUCCESS || status < 0)
        sdk::fail(HETERO_ERR_DEVICE_LOST, std::string("OpenCL execution failed: ") + cl_error_name(err != CL_SUCCESS ? err : status));
    if (flag_[0] == 0) return;
    // Clear the flag for the next execution, then report the first bad node.
    clEnqueueWriteBuffer(queue_, flag_mem_, CL_TRUE, 0, sizeof kFlagInit, kFlagInit, 0, nullptr, nullptr);
    const uint32_t node = uint32_t(flag_[1]);
    const char* op = node < node_ops_->size() ? sdk::op_name((*node_ops_)[node]) : "?";
    std::string what;
    if (flag_[0] & kErrIdRange) what = "token id outside the embedding table";
    if (flag_[0] & kErrPosRange) what += std::string(what.empty() ? "" : "; ") + "position outside the KV cache";
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "node " + std::to_string(node) + " (" + op + "): " + what);
}

}  // namespace hetero::opencl
