// Loads one provider plugin over the C ABI (dlopen, hetero_ep_init, create)
// and checks what it hands back. Runs in the tool's child process: every
// step is announced first, so a plugin that crashes or exits inside one is
// reported with the step it was in.
#pragma once

#include "result_channel.hpp"

#include <hetero/ep_api.h>

#include <string>
#include <utility>
#include <vector>

namespace hetero::conformance {

// The plugin refused to load or start and said why (or why is evident).
struct PluginRefused {
    std::string message;
};

struct LoadedProvider {
    const hetero_ep_api* api = nullptr;
    hetero_ep* ep = nullptr;
    uint32_t n_devices = 0;
};

// Throws PluginRefused. `verbose` lets the provider's info/debug logs through.
LoadedProvider load_provider(const std::string& path, const std::vector<std::pair<std::string, std::string>>& options,
                             bool verbose, RecordWriter& phases);

// "provider cpu 0.1.0, device 0: NAME (DRIVER)" and, for ABI 1.1+, a second
// line with the resource and the launch/compile hints.
std::string device_title(const hetero_ep_api& api, hetero_ep* ep, uint32_t device);

}  // namespace hetero::conformance
