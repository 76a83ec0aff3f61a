#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace hetero::bench {

LoadedProvider::LoadedProvider(const std::string& path, const std::vector<std::pair<std::string, std::string>>& options) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error("cannot load " + path + ": " + dlerror());
    auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(handle_, HETERO_EP_ENTRY_SYMBOL));
    if (!init) throw std::runtime_error(path + " does not export " HETERO_EP_ENTRY_SYMBOL);
    static const hetero_host_api host{sizeof(hetero_host_api), HETERO_ABI_VERSION, nullptr, nullptr};
    const char* reason = nullptr;
    api_ = init(&host, HETERO_ABI_VERSION, &reason);
    if (!api_) throw std::runtime_error(path + " refused to start: " + (reason ? reason : "no reason given"));
    std::vector<hetero_option> opts;
    for (const auto& [k, v] : options) opts.push_back({k.c_str(), v.c_str()});
    check(api_->create(opts.data(), opts.size(), &ep_), "create");
}

LoadedProvider::~LoadedProvider() {
    if (ep_) api_->destroy(ep_);
    if (handle_) dlclose(handle_);
}

void LoadedProvider::check(hetero_status status, const char* what) const {
    if (status != HETERO_OK) throw std::runtime_error(std::string(what) + " failed: " + api_->last_error());
}

}  // namespace hetero::bench
