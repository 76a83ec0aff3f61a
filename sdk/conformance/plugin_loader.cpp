#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace hetero::conformance {
namespace {

bool g_verbose = false;

void host_log(void*, int level, const char* provider, const char* msg) {
    if (level >= HETERO_LOG_WARN || g_verbose) std::fprintf(stderr, "[%s] %s\n", provider ? provider : "?", msg ? msg : "");
}

}  // namespace

LoadedProvider load_provider(const std::string& path, const std::vector<std::pair<std::string, std::string>>& options,
                             bool verbose, RecordWriter& phases) {
    g_verbose = verbose;
    phases.send(RecordKind::Phase, {"loading the plugin (dlopen)"});
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw PluginRefused{std::string("cannot load it: ") + dlerror()};
    auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(lib, HETERO_EP_ENTRY_SYMBOL));
    if (!init) throw PluginRefused{std::string("it exports no ") + HETERO_EP_ENTRY_SYMBOL + ": it is not a hetero provider"};

    phases.send(RecordKind::Phase, {std::string("calling ") + HETERO_EP_ENTRY_SYMBOL});
    static const hetero_host_api host = {
        .struct_size = sizeof(hetero_host_api), .abi_version = HETERO_ABI_VERSION, .host_ctx = nullptr, .log = &host_log};
    const char* reason = nullptr;
    LoadedProvider p;
    p.api = init(&host, HETERO_ABI_VERSION, &reason);
    if (!p.api) throw PluginRefused{std::string("it refused to start: ") + (reason ? reason : "no reason given")};
    const hetero_ep_api& api = *p.api;
    if (HETERO_ABI_MAJOR_OF(api.abi_version) != HETERO_ABI_VERSION_MAJOR || api.struct_size < sizeof(hetero_ep_api))
        throw PluginRefused{"it speaks ABI " + std::to_string(HETERO_ABI_MAJOR_OF(api.abi_version)) + "." +
                            std::to_string(HETERO_ABI_MINOR_OF(api.abi_version)) + " (table of " + std::to_string(api.struct_size) +
                            " bytes); this kit checks ABI " + std::to_string(HETERO_ABI_VERSION_MAJOR) + "." +
                            std::to_string(HETERO_ABI_VERSION_MINOR)};

    phases.send(RecordKind::Phase, {std::string("creating provider ") + api.name + " (create)"});
    std::vector<hetero_option> opts;
    for (const auto& [k, v] : options) opts.push_back({k.c_str(), v.c_str()});
    if (api.create(opts.data(), opts.size(), &p.ep) != HETERO_OK || !p.ep)
        throw PluginRefused{std::string("provider ") + api.name + " did not start: " + api.last_error()};

    phases.send(RecordKind::Phase, {std::string("counting the devices of provider ") + api.name + " (device_count)"});
    p.n_devices = api.device_count(p.ep);  // the provider may discover its devices only now
    if (p.n_devices == 0) {
        const std::string why = api.last_error();
        api.destroy(p.ep);
        throw PluginRefused{std::string("provider ") + api.name + " has no device: " + why};
    }
    return p;
}

std::string device_title(const hetero_ep_api& api, hetero_ep* ep, uint32_t device) {
    hetero_device_props props{};
    props.struct_size = sizeof(props);
    props.abi_version = HETERO_ABI_VERSION;
    std::string title = std::string("provider ") + api.name + " " + api.version + ", device " + std::to_string(device);
    if (api.device_props(ep, device, &props) != HETERO_OK) return title + ": device_props failed: " + api.last_error();
    title += std::string(": ") + props.name + " (" + props.driver + ")";
    if (HETERO_ABI_MINOR_OF(api.abi_version) >= 1 && HETERO_HAS_FIELD(hetero_device_props, &props, compile_seconds_hint)) {
        char hints[160];
        std::snprintf(hints, sizeof hints, "\n  resource '%s', launch %.3g s, compile %.3g s", props.resource, props.launch_seconds_hint,
                      props.compile_seconds_hint);
        title += hints;
    }
    return title;
}

}  // namespace hetero::conformance
