// One device's part of a forward: its queue of the schedule, in order. Before
// a task it waits for the hand-overs made elsewhere and copies them in
// (unless the device binds host memory itself); after it, it makes the
// hand-overs others read available in host memory.
#include <hetero/crash_report.hpp>
#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/trace.hpp>

#include "session_parts.hpp"

#include <algorithm>
#include <cstring>

namespace hetero {

namespace {

// Marks an exchange readable from the host for this forward.
void set_ready(Exchange& e, uint64_t generation, double since_start, std::mutex& mu, std::condition_variable& cv, bool notify) {
    const double before = e.expected_ready.load(std::memory_order_relaxed);
    e.expected_ready.store(before == 0 ? since_start : 0.8 * before + 0.2 * since_start, std::memory_order_relaxed);
    e.ready.store(generation, std::memory_order_release);
    if (notify) {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();
    }
}

// A device's binding of an exchange; every one is made when the program is built.
Exchange::OnDevice& binding_on(Exchange& e, size_t device) {
    auto it = e.on_device.find(device);
    if (it == e.on_device.end()) throw Error(fmt::format("internal: {} has no binding on device {}", e.name, device));
    return it->second;
}

class QueueRunner {
public:
    QueueRunner(SessionDevice& dv, SessionProgram& P, const SessionOptions& options, size_t device, int32_t pos)
        : dv_(dv), P_(P), options_(options), device_(device), pos_(pos), api_(*dv.api), ep_(dv.p->ep()),
          notify_(options.sync == SyncMode::block), trace_(options.trace), event_seconds_(dv.p->event_seconds()) {}

    void run() {
        const auto t_start = SessionClock::now();
        try {
            for (size_t ti : queue()) {
                const ScheduledTask& t = P_.schedule.tasks[ti];
                if (t.kind == TaskKind::merge) {
                    merge(t);
                    continue;
                }
                copy_inputs(t);
                execute(ti);
                publish_outputs(t);
            }
            finish_pending();
        } catch (...) {
            try {
                finish_pending();
            } catch (...) {
            }
            dv_.stats.seconds += seconds_since(t_start);
            throw;
        }
        dv_.stats.seconds += seconds_since(t_start);
    }

private:
    const std::vector<size_t>& queue() const {
        for (const DeviceQueue& q : P_.schedule.queues)
            if (q.device == device_) return q.tasks;
        throw Error(fmt::format("internal: device {} has no queue in the schedule", device_));
    }

    Exchange& exchange(int x) { return *P_.exchanges[size_t(x)]; }

    void finish(hetero_event* ev, const std::string& what) {
        const PluginCall call("execute");
        const hetero_status st = api_.event_wait(ep_, ev);
        double s = 0;
        uint32_t flags = 0;
        last_device_seconds_ = -1;
        if (st == HETERO_OK && event_seconds_ && event_seconds_(ep_, ev, &s, &flags) == HETERO_OK) {
            dv_.stats.device_seconds = std::max(0.0, dv_.stats.device_seconds) + s;
            dv_.stats.simulated = (flags & HETERO_TIME_SIMULATED) != 0;
            last_device_seconds_ = s;
        }
        api_.event_release(ep_, ev);
        dv_.check(st, what);
    }

    // Every event is waited for, even after a failure; the first error wins.
    void finish_pending() {
        std::exception_ptr first;
        for (hetero_event* ev : pending_) {
            try {
                finish(ev, "running " + dv_.ref.label());
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        pending_.clear();
        if (first) std::rethrow_exception(first);
    }

    // Waits until `e` is readable from the host: sleep for the predicted rest,
    // then poll (HeteroLLM's fast synchronisation), or block on the cv.
    void wait_ready(Exchange& e) {
        if (e.ready.load(std::memory_order_acquire) == P_.generation) return;
        const auto t0 = SessionClock::now();
        if (options_.sync == SyncMode::block) {
            std::unique_lock<std::mutex> lock(P_.mu);
            P_.cv.wait(lock, [&] { return e.ready.load(std::memory_order_acquire) == P_.generation || P_.failed.load(); });
        } else {
            const double rest = e.expected_ready.load(std::memory_order_relaxed) - seconds_since(P_.started);
            if (rest > 200e-6) std::this_thread::sleep_for(std::chrono::duration<double>(rest - 100e-6));
            while (e.ready.load(std::memory_order_acquire) != P_.generation && !P_.failed.load()) std::this_thread::yield();
        }
        if (P_.failed.load()) throw SessionAborted{};
        if (trace_) trace_->add({dv_.ref.label(), "wait " + e.name, "wait", t0, seconds_since(t0), -1});
    }

    // The shares of a split matmul, joined row by row in host memory.
    void merge(const ScheduledTask& t) {
        Exchange& out = exchange(t.outputs.front());
        for (int x : t.inputs) wait_ready(exchange(x));
        const auto t0 = SessionClock::now();
        const int64_t width = P_.graph.tensors[size_t(P_.graph.nodes[t.nodes.front()].node.inputs[1])].desc.shape[0];
        const int64_t rows = int64_t(out.bytes / 4) / width;
        for (int x : t.inputs) {
            const Share& share = P_.schedule.tasks[size_t(P_.schedule.hand_overs[size_t(x)].from_task)].rows;
            const int64_t w = share.row_end - share.row_begin;
            const float* src = reinterpret_cast<const float*>(exchange(x).host->data);
            float* dst = reinterpret_cast<float*>(out.host->data);
            for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * width + share.row_begin, src + r * w, size_t(w) * 4);
        }
        if (trace_) trace_->add({dv_.ref.label(), t.name, "merge", t0, seconds_since(t0), -1});
        set_ready(out, P_.generation, seconds_since(P_.started), P_.mu, P_.cv, notify_);
    }

    // Inputs from other devices (or the host): wait, then copy in unless imported.
    void copy_inputs(const ScheduledTask& t) {
        for (int x : t.inputs) {
            Exchange& e = exchange(x);
            if (e.producer == long(device_)) continue;
            wait_ready(e);
            Exchange::OnDevice& od = binding_on(e, device_);
            if (od.imported || od.delivered == P_.generation) continue;
            const auto t0 = SessionClock::now();
            dv_.check(api_.buffer_write(ep_, od.buffer, od.offset, e.host->data, e.bytes), "writing " + e.name);
            od.delivered = P_.generation;
            if (trace_) trace_->add({dv_.ref.label(), "write " + e.name, "transfer", t0, seconds_since(t0), -1});
        }
    }

    void execute(size_t ti) {
        const ScheduledTask& t = P_.schedule.tasks[ti];
        CompiledTask& c = P_.compiled[ti];
        const auto t0 = SessionClock::now();
        hetero_event* ev = nullptr;
        const PluginCall call("execute");
        dv_.check(api_.execute(ep_, c.exe, c.bindings.data(), c.bindings.size(), &ev), "running " + t.name);
        dv_.stats.runs += 1;
        if (!trace_) {
            if (ev) pending_.push_back(ev);
            return;
        }
        // Each task is waited for, so its slice is its device time.
        last_device_seconds_ = -1;
        if (ev) finish(ev, "running " + t.name);
        const double measured = seconds_since(t0);  // before the prediction below costs host time
        TraceRecorder::Slice slice{dv_.ref.label(), t.name, "execute", t0, measured, predicted_seconds(t)};
        if (dv_.stats.simulated && last_device_seconds_ >= 0) {
            // A simulated device: its modelled time is the slice; the emulation's wall time is kept beside it.
            slice.host_seconds = slice.seconds;
            slice.seconds = last_device_seconds_;
            slice.simulated = true;
        }
        trace_->add(slice);
    }

    // What the cost model predicts for a task (traces only); -1 without one.
    double predicted_seconds(const ScheduledTask& t) const {
        if (!options_.cost) return -1;
        double predicted = options_.cost->execute_seconds(device_, P_.n);
        for (size_t i : t.nodes) {
            OpShape s = op_shape(P_.graph, i, int64_t(pos_) + (P_.n + 1) / 2);
            if (t.share >= 0) s.m = t.rows.row_end - t.rows.row_begin;
            const double v = options_.cost->node_seconds(device_, s);
            predicted += v > 0 ? v : 0;
        }
        return predicted;
    }

    // Outputs others read: make them readable from the host.
    void publish_outputs(const ScheduledTask& t) {
        for (int x : t.outputs) {
            Exchange& e = exchange(x);
            if (!e.needs_host) continue;
            const Exchange::OnDevice& od = binding_on(e, device_);
            const auto tr = SessionClock::now();
            if (od.imported) {
                finish_pending();  // the device wrote the host's memory itself
                if (e.alias_of >= 0)  // ...of the tensor this one is a slice of
                    std::memcpy(e.host->data, exchange(e.alias_of).host->data + e.alias_offset, e.bytes);
            } else {
                // Work on one device runs in submission order: the read sees the results.
                dv_.check(api_.buffer_read(ep_, od.buffer, od.offset, e.host->data, e.bytes), "reading " + e.name);
                finish_pending();  // a kernel's error outranks the data read
                if (trace_) trace_->add({dv_.ref.label(), "read " + e.name, "transfer", tr, seconds_since(tr), -1});
            }
            set_ready(e, P_.generation, seconds_since(P_.started), P_.mu, P_.cv, notify_);
        }
    }

    SessionDevice& dv_;
    SessionProgram& P_;
    const SessionOptions& options_;
    const size_t device_;
    const int32_t pos_;
    const hetero_ep_api& api_;
    hetero_ep* ep_;
    const bool notify_;
    TraceRecorder* trace_;
    const decltype(hetero_ep_api::event_seconds) event_seconds_;
    std::vector<hetero_event*> pending_;
    double last_device_seconds_ = -1;  // of the event finished last; < 0 = not reported
};

}  // namespace

void Session::run_tasks(SessionProgram& P, size_t device, int32_t pos) { QueueRunner(*devices_[device], P, options_, device, pos).run(); }

}  // namespace hetero
