// hetero_device_props.resource (ABI 1.1): the physical resource a device
// computes on, formatted one way by every provider so that two providers'
// views of one piece of silicon compare equal (see ep_api.h).
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace hetero::sdk {

// Everything that executes on the host CPU's cores.
inline constexpr const char* kHostResource = "host";

// The forms below start with `kind`: "gpu" for a GPU, "device" for any other
// device that does not run on the host's cores (an NPU, an accelerator).

// "gpu:" + 32 lowercase hex digits, or "" when the UUID is all zero (a
// driver that fills the query without knowing the answer).
inline std::string resource_from_uuid(const uint8_t (&uuid)[16], const char* kind = "gpu") {
    bool any = false;
    for (uint8_t b : uuid) any = any || b != 0;
    if (!any) return {};
    std::string s = std::string(kind) + ":";
    char hex[3];
    for (uint8_t b : uuid) {
        std::snprintf(hex, sizeof hex, "%02x", unsigned(b));
        s += hex;
    }
    return s;
}

// "gpu:pci:dddd:bb:dd.f".
inline std::string resource_from_pci(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function, const char* kind = "gpu") {
    char s[48];
    std::snprintf(s, sizeof s, ":pci:%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu, function & 0x7u);
    return kind + std::string(s);
}

// The last resort: "gpu:" + vendor id + ":" + device name. Two GPUs of one
// model then look like one resource (the cautious mistake: the solver will
// not count on running them in parallel).
inline std::string resource_from_name(uint32_t vendor_id, const std::string& name, const char* kind = "gpu") {
    char v[16];
    std::snprintf(v, sizeof v, "%04x", vendor_id);
    return std::string(kind) + ":" + v + ":" + name;
}

// Copies `r` into props.resource (truncated to 63 bytes, NUL-terminated).
inline void set_resource(hetero_device_props& p, const std::string& r) { std::snprintf(p.resource, sizeof p.resource, "%s", r.c_str()); }

}  // namespace hetero::sdk
