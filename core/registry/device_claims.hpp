// What a provider says about a device, held to physical bounds (private to
// core/registry). A plugin is not trusted with the planner: a device that
// claims 2^62 bytes of memory or a 1e30 GFLOP/s peak would win every plan.
// Claims past a bound are clamped to it (a nonsensical hint, such as NaN or
// a negative one, becomes 0, "unknown") and one warning per provider names
// them.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <string>

namespace hetero::registry_detail {

// Memory no device has: 1 PiB; a device in the host's memory has at most
// the host's RAM.
inline constexpr uint64_t kMaxDeviceMemory = uint64_t(1) << 50;
// 10 PFLOP/s and 10 TB/s: beyond any single device.
inline constexpr double kMaxPeakGflops = 1e7;
inline constexpr double kMaxBandwidthGbs = 1e4;
// Launch round trips take at least ~100 ns and at most a second; a compile
// at most an hour.
inline constexpr double kMinLaunchSeconds = 1e-7;
inline constexpr double kMaxLaunchSeconds = 1;
inline constexpr double kMaxCompileSeconds = 3600;

// Clamps `p` (already sanitised: only its real fields are non-zero) and
// logs one warning per `provider` naming what it claimed.
void clamp_device_claims(const std::string& provider, uint32_t device, hetero_device_props& p);

// The host's physical memory in bytes (0 when unknown).
uint64_t host_memory_bytes();

}  // namespace hetero::registry_detail
