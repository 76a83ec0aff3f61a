#include "device_claims.hpp"

#include <hetero/log.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include <unistd.h>

namespace hetero::registry_detail {

namespace {

// A hint clamped into [lo, hi]; NaN, infinite or negative becomes 0 (unknown).
double bounded_hint(double v, double lo, double hi) {
    if (!std::isfinite(v) || v < 0) return 0;
    return v == 0 ? 0 : std::clamp(v, lo, hi);
}

void warn_once(const std::string& provider, const std::string& what) {
    static std::mutex m;
    static std::set<std::string> warned;
    {
        std::lock_guard<std::mutex> lock(m);
        if (!warned.insert(provider).second) return;
    }
    log(LogLevel::warn, fmt::format("provider {} claims {}: clamped to physical bounds", provider, what));
}

}  // namespace

uint64_t host_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

void clamp_device_claims(const std::string& provider, uint32_t device, hetero_device_props& p) {
    std::string claims;
    auto note = [&](const std::string& s) { claims += (claims.empty() ? "" : ", ") + s; };
    uint64_t max_memory = kMaxDeviceMemory;
    if (p.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY)
        if (const uint64_t host = host_memory_bytes(); host > 0) max_memory = std::min(max_memory, host);
    if (p.memory_bytes > max_memory) {
        note(fmt::format("{} bytes of memory on device {} (at most {})", p.memory_bytes, device, max_memory));
        p.memory_bytes = max_memory;
    }
    auto hint = [&](double& v, double lo, double hi, const char* what) {
        const double b = bounded_hint(v, lo, hi);
        if (b == v) return;
        note(fmt::format("{} {} on device {} (now {})", what, v, device, b));
        v = b;
    };
    hint(p.peak_gflops, 0, kMaxPeakGflops, "a peak of GFLOP/s");
    hint(p.peak_bandwidth_gbs, 0, kMaxBandwidthGbs, "a bandwidth in GB/s");
    if (HETERO_HAS_FIELD(hetero_device_props, &p, launch_seconds_hint))
        hint(p.launch_seconds_hint, kMinLaunchSeconds, kMaxLaunchSeconds, "a launch time in seconds");
    if (HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint))
        hint(p.compile_seconds_hint, 0, kMaxCompileSeconds, "a compile time in seconds");
    if (!claims.empty()) warn_once(provider, claims);
}

}  // namespace hetero::registry_detail
