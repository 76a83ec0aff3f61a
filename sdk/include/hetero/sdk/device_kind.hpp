// A device kind (hetero_device_props::kind) as tools print it.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>

namespace hetero::sdk {

inline const char* device_kind_name(uint32_t kind) {
    switch (kind) {
        case HETERO_DEVICE_CPU: return "cpu";
        case HETERO_DEVICE_GPU: return "gpu";
        case HETERO_DEVICE_NPU: return "npu";
        default: return "other";
    }
}

}  // namespace hetero::sdk
