// A device as the runtime names it, and what a device gets unless told
// otherwise. The lowest header of the runtime: the plan, the session, the
// solver, the profiler and the simulator all speak of devices in these terms.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/registry.hpp>

#include <cstdint>
#include <string>

namespace hetero {

// One device of a loaded provider (provider null: a simulated device, named
// by its props).
struct DeviceRef {
    Provider* provider = nullptr;
    uint32_t index = 0;
    hetero_device_props props{};
    std::string label() const;  // "cpu:0"
};

// Element type of the KV cache. automatic: f16 on GPU and NPU devices (half
// the cache traffic; their attention kernels compute in f16 anyway), f32 on
// CPU devices (runs that reproduce the scalar reference exactly).
enum class CacheType { automatic, f32, f16 };
// "auto", "f32" or "f16"; throws hetero::Error naming the value otherwise.
CacheType cache_type_from_name(const std::string& name);
// The cache element type a device gets (hetero_dtype): the one rule for
// automatic, which sessions, the device probe and the profiler all follow.
uint32_t cache_dtype(CacheType type, const hetero_device_props& props);

}  // namespace hetero
