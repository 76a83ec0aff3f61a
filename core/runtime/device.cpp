#include <hetero/error.hpp>
#include <hetero/runtime/device.hpp>

#include <fmt/format.h>

namespace hetero {

std::string DeviceRef::label() const {
    // A simulated device (no provider) is named by its props, e.g. "npu:0".
    if (!provider) return fmt::format("{}:{}", props.name[0] ? props.name : "?", index);
    return fmt::format("{}:{}", provider->name(), index);
}

CacheType cache_type_from_name(const std::string& name) {
    if (name == "auto") return CacheType::automatic;
    if (name == "f32") return CacheType::f32;
    if (name == "f16") return CacheType::f16;
    throw Error("unknown KV cache type '" + name + "' (known: auto, f32, f16)");
}

uint32_t cache_dtype(CacheType type, const hetero_device_props& props) {
    const bool half = type == CacheType::f16 || (type == CacheType::automatic && props.kind != HETERO_DEVICE_CPU);
    return half ? HETERO_DTYPE_F16 : HETERO_DTYPE_F32;
}

}  // namespace hetero
