// Facts about the host CPU for providers whose devices run on its cores (the
// CPU provider, and OpenCL / Vulkan CPU implementations such as PoCL and
// lavapipe, whose APIs report no peak or bandwidth): one rule for all, so
// their hints agree.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace hetero::sdk {

// First value of a "key : value" line of /proc/cpuinfo, or "".
inline std::string cpuinfo_value(const char* key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    const size_t key_len = std::strlen(key);
    while (std::getline(in, line)) {
        if (line.compare(0, key_len, key) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const size_t b = line.find_first_not_of(" \t", colon + 1);
        if (b == std::string::npos) continue;
        return line.substr(b);
    }
    return {};
}

// CPUs this process may run on.
inline int host_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? int(hw) : 1;
}

// Nominal clock from /proc/cpuinfo, or 2.5 GHz when it says nothing.
inline double host_cpu_mhz() {
    const std::string mhz = cpuinfo_value("cpu MHz");
    try {
        const double v = mhz.empty() ? 0.0 : std::stod(mhz);
        if (v > 100.0) return v;
    } catch (const std::exception&) {
    }
    return 2500.0;
}

// DRAM read bandwidth `threads` cores of a host can draw, a hint for the
// solver: 25 GB/s per core up to 100 GB/s. On the 2-core AMD EPYC (Zen 5)
// VM of BENCHMARKS.md, bench_bandwidth read 46-60 GB/s with 2 threads and the
// CPU provider's one-token f32 matmul streamed its weights at ~49 GB/s
// (bench_op_estimates, 2026-11-24); desktops with two DDR4/DDR5 channels
// give 40-90 GB/s in all, which the cap stands for. Servers with more
// channels are underestimated.
inline double host_bandwidth_gbs_hint(int threads) { return std::min(25.0 * std::max(threads, 1), 100.0); }

}  // namespace hetero::sdk
