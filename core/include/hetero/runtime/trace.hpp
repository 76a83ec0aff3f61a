// Records what every device did, and writes it as Chrome trace-event JSON
// (opens in Perfetto or chrome://tracing): one track per device, one slice
// per executable run, transfer and wait, with the predicted time beside the
// measured one. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace hetero {

class TraceRecorder {
public:
    using Clock = std::chrono::steady_clock;
    struct Slice {
        std::string track;  // device label, or "host"
        std::string name;   // e.g. "layers 0-4", "transfer blk.0.attn_in -> opencl:0"
        std::string category;  // "execute", "transfer", "wait", "merge", "forward", "compile", "upload"
        Clock::time_point start;
        double seconds = 0;
        double predicted_seconds = -1;  // < 0 = no prediction
        // The device's own figure replaced the host's clock: a simulated
        // device's modelled seconds (host_seconds keeps the emulation's wall time).
        bool simulated = false;
        double host_seconds = -1;
        uint64_t bytes = 0;  // what an "upload" moved
    };

    TraceRecorder() : origin_(Clock::now()) {}
    void add(Slice s);
    std::vector<Slice> slices() const;
    // The slices recorded since the first `from` (a count taken with size()).
    std::vector<Slice> slices(size_t from) const;
    size_t size() const;
    // Per track: measured and predicted seconds of the slices that have a prediction.
    struct Accuracy {
        std::string track;
        int count = 0;
        double median_abs_error = 0;  // median of |measured - predicted| / measured
        double measured = 0, predicted = 0;
        bool simulated = false;  // the track's times are simulated
    };
    std::vector<Accuracy> accuracy(const std::string& category = "execute") const;
    // Per track: how many slices of a category, their seconds and bytes.
    struct Total {
        int count = 0;
        double seconds = 0;
        uint64_t bytes = 0;
    };
    std::map<std::string, Total> totals(const std::string& category) const;
    std::string to_json() const;
    // Writes to_json() to `path`; throws hetero::Error naming the file on failure.
    void write(const std::string& path) const;

private:
    Clock::time_point origin_;
    mutable std::mutex mu_;
    std::vector<Slice> slices_;
};

}  // namespace hetero
