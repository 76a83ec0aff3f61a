// Loads one provider plugin with dlopen and creates an instance, over the C
// ABI alone (benchmarks do not link the core).
#pragma once

#include <hetero/ep_api.h>

#include <string>
#include <utility>
#include <vector>

namespace hetero::bench {

class LoadedProvider {
public:
    // Throws std::runtime_error naming the plugin and the reason on failure.
    LoadedProvider(const std::string& path, const std::vector<std::pair<std::string, std::string>>& options);
    ~LoadedProvider();
    LoadedProvider(const LoadedProvider&) = delete;
    LoadedProvider& operator=(const LoadedProvider&) = delete;

    const hetero_ep_api& api() const { return *api_; }
    hetero_ep* ep() const { return ep_; }
    // Throws with the provider's last error when status is not HETERO_OK.
    void check(hetero_status status, const char* what) const;

private:
    void* handle_ = nullptr;
    const hetero_ep_api* api_ = nullptr;
    hetero_ep* ep_ = nullptr;
};

}  // namespace hetero::bench
