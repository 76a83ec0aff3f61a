// The session's inner parts (core/runtime/session*.cpp only): a device of the
// plan with its buffers and worker, a hand-over's host memory and bindings,
// and a program: one chunk size's schedule, compiled.
#pragma once

#include <hetero/error.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/schedule/schedule.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace hetero {

using SessionClock = std::chrono::steady_clock;
inline double seconds_since(SessionClock::time_point t) { return std::chrono::duration<double>(SessionClock::now() - t).count(); }

// Thrown inside a worker when another worker failed: unwinds quietly.
struct SessionAborted {};

// Host memory for tensors that cross devices, page-aligned so devices that
// share the host's memory can import it without a copy.
struct HostBlock {
    uint8_t* data = nullptr;
    uint64_t bytes = 0;
    explicit HostBlock(uint64_t n);
    ~HostBlock();
    HostBlock(const HostBlock&) = delete;
    HostBlock& operator=(const HostBlock&) = delete;
};

// One device of the plan: its buffers, uploaded weights, KV caches and worker thread.
struct SessionDevice {
    size_t index = 0;
    DeviceRef ref;
    Provider* p = nullptr;
    const hetero_ep_api* api = nullptr;
    uint32_t dev = 0;
    std::vector<hetero_buffer*> buffers;            // released in the destructor
    std::map<std::string, hetero_buffer*> weights;  // "name rows a-b" -> uploaded or imported rows
    SegmentStats stats;
    // Weight uploads so far (for the trace: the first program pays them all).
    uint64_t uploaded_bytes = 0;
    double upload_seconds = 0;

    // Worker: runs `job` once per `go` increment.
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    uint64_t go = 0;
    bool quit = false;
    std::function<void()> job;

    ~SessionDevice();
    bool unified() const { return ref.props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY; }
    // Provider::check, with a failure reported as this device's fault.
    void check(hetero_status s, const std::string& what) const;
    hetero_buffer* alloc(uint64_t bytes, const std::string& what);
    // Host memory imported without a copy where the device shares it; nullptr otherwise.
    hetero_buffer* import(void* ptr, uint64_t bytes);
    // Rows [r0, r1) of a weight (all rows of a vector): mapped from the file
    // where the device shares host memory, else copied to the device once.
    hetero_buffer* weight(const WeightView& w, int64_t r0, int64_t r1);
    void start_worker();
    void release(hetero_executable* exe) const { api->executable_release(p->ep(), exe); }
};

// A hand-over of the schedule at run time: host memory, plus its binding on
// every device that touches it.
struct Exchange {
    std::string name;
    uint64_t bytes = 0;
    std::unique_ptr<HostBlock> host;
    long producer = -1;  // device index; -1 = the host (inputs, merged splits)
    struct OnDevice {
        hetero_buffer* buffer = nullptr;
        uint64_t offset = 0;
        bool imported = false;   // the buffer is `host` itself
        uint64_t delivered = 0;  // forward generation it was last written in
    };
    std::map<size_t, OnDevice> on_device;
    bool needs_host = false;  // read on another device or by the host
    // For last_hidden: bound on the producer at an offset of this exchange.
    int alias_of = -1;
    uint64_t alias_offset = 0;
    std::atomic<uint64_t> ready{0};  // forward generation in which `host` became valid
    // Seconds after the forward starts, smoothed (fast sync). Written by the
    // producer as it publishes, read by waiters that may not have seen
    // `ready` yet: atomic (relaxed: it is only a hint for the sleep).
    std::atomic<double> expected_ready{0};

    explicit Exchange(const HandOver& h);
};

// A KV cache binding of a compiled task: the cache of the step's sequence
// `seq` (0 in a single-sequence program), which the session points at the
// cache of the sequence that step runs for before each run.
struct CacheBinding {
    size_t binding = 0;  // index into CompiledTask::bindings
    int layer = 0;
    bool k = true;  // K cache, else V
    int seq = 0;    // kStackedCaches: the layer's whole stacked buffer, bound once
};

// What compiling made of a scheduled task (a merge has neither).
struct CompiledTask {
    hetero_executable* exe = nullptr;
    std::vector<hetero_binding> bindings;
    std::vector<CacheBinding> caches;
};

// Per layer, per sequence of the session (KvCache: session.hpp).
using KvCaches = std::vector<std::vector<KvCache>>;

struct SessionProgram {
    int32_t n = 0;
    ModelGraph graph;
    Schedule schedule;
    std::vector<std::unique_ptr<Exchange>> exchanges;  // parallel to schedule.hand_overs
    std::vector<CompiledTask> compiled;                // parallel to schedule.tasks
    // The session's sequence whose cache each of the step's sequences is bound to now.
    std::vector<int32_t> bound_seqs;
    // One forward's shared state.
    uint64_t generation = 0;
    SessionClock::time_point started;
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::condition_variable cv;  // ready flags (block mode) and worker completion
    int running = 0;
    std::exception_ptr error;  // the first worker's failure
};

}  // namespace hetero
