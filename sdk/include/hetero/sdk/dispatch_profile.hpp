// Per-dispatch device timing for GPU providers: each provider measures its
// dispatches its own way (Vulkan timestamps, OpenCL event profiling) and
// hands the times of every run to a DispatchTimes, which sums them and logs
// them, grouped by kernel and shapes, when the executable goes away. Shows
// where a token's time goes without an external profiler.
#pragma once

#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace hetero::sdk {

// "f32[512x2048]".
inline std::string shape_label(const hetero_tensor_desc& t) {
    std::string l = dtype_name(t.dtype);
    for (uint32_t k = 0; k < t.ndim; ++k) l += (k ? "x" : "[") + std::to_string(t.shape[k]);
    return l + "]";
}

class DispatchTimes {
public:
    // labels[i] and bytes[i] describe dispatch i (bytes: operand traffic, for GB/s).
    DispatchTimes(const char* provider, std::vector<std::string> labels, std::vector<uint64_t> bytes)
        : provider_(provider), labels_(std::move(labels)), bytes_(std::move(bytes)), sum_us_(labels_.size(), 0.0) {}

    size_t size() const { return labels_.size(); }

    // One finished run: `us[i]` the device time of dispatch i, `gpu_us` the
    // device time from the first start to the last end, `host_us` the
    // submit-to-done wall time.
    void add_run(const std::vector<double>& us, double gpu_us, double host_us) {
        for (size_t i = 0; i < sum_us_.size() && i < us.size(); ++i) sum_us_[i] += us[i];
        gpu_us_ += gpu_us;
        host_us_ += host_us;
        ++runs_;
    }

    void report() const {
        if (runs_ == 0) return;
        struct Group {
            size_t count = 0;
            double us = 0;
            uint64_t bytes = 0;
        };
        std::map<std::string, Group> groups;
        for (size_t i = 0; i < labels_.size(); ++i) {
            Group& g = groups[labels_[i]];
            ++g.count;
            g.us += sum_us_[i] / double(runs_);
            g.bytes += bytes_[i];
        }
        std::vector<std::pair<std::string, Group>> sorted(groups.begin(), groups.end());
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
        const double gpu = gpu_us_ / double(runs_);
        char line[512];
        std::snprintf(line, sizeof(line), "profile: %zu dispatches, %llu runs: gpu %.1f us/run, host submit-to-done %.1f us/run",
                      labels_.size(), (unsigned long long)runs_, gpu, host_us_ / double(runs_));
        log(HETERO_LOG_WARN, provider_, line);
        for (const auto& [label, g] : sorted) {
            std::snprintf(line, sizeof(line), "profile: %8.1f us %5.1f%% x%-3zu %6.2f us each %7.1f GB/s  %s", g.us,
                          gpu > 0 ? 100.0 * g.us / gpu : 0.0, g.count, g.us / double(g.count),
                          g.us > 0 ? double(g.bytes) / (g.us * 1e3) : 0.0, label.c_str());
            log(HETERO_LOG_WARN, provider_, line);
        }
    }

private:
    const char* provider_;
    std::vector<std::string> labels_;
    std::vector<uint64_t> bytes_;
    std::vector<double> sum_us_;
    double gpu_us_ = 0, host_us_ = 0;
    uint64_t runs_ = 0;
};

}  // namespace hetero::sdk
