// hetero-conformance: checks one provider plugin against the reference ops,
// over the C ABI only (plain dlopen; no core needed).
//
//   hetero-conformance PLUGIN.so [--device N] [--filter SUBSTRING]
//                      [--option key=value ...] [--list] [-v]
//
// Exit status: 0 all passed (or skipped), 1 a case failed, 2 the plugin did
// not load or the command line is wrong.
#include "conformance.hpp"

#include <hetero/ep_api.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int usage(const char* why) {
    std::fprintf(stderr, "hetero-conformance: %s\n"
                         "usage: hetero-conformance PLUGIN.so [--device N] [--filter SUBSTRING] [--option key=value ...] [--list] [-v]\n", why);
    return 2;
}

bool g_verbose = false;

void host_log(void*, int level, const char* provider, const char* msg) {
    if (level >= HETERO_LOG_WARN || g_verbose) std::fprintf(stderr, "[%s] %s\n", provider ? provider : "?", msg ? msg : "");
}

}  // namespace

int main(int argc, char** argv) {
    std::string plugin, filter;
    long device = -1;
    bool list = false;
    std::vector<std::string> option_text;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* flag) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)flag;
            return argv[++i];
        };
        if (a == "--device") {
            const char* v = value("--device");
            char* end = nullptr;
            if (!v || (device = std::strtol(v, &end, 10), *end != '\0') || device < 0) return usage("--device needs a non-negative integer");
        } else if (a == "--filter") {
            const char* v = value("--filter");
            if (!v) return usage("--filter needs a substring");
            filter = v;
        } else if (a == "--option") {
            const char* v = value("--option");
            if (!v || !std::strchr(v, '=')) return usage("--option needs key=value");
            option_text.push_back(v);
        } else if (a == "--list") {
            list = true;
        } else if (a == "-v" || a == "--verbose") {
            g_verbose = true;
        } else if (a == "-h" || a == "--help") {
            usage("checks a provider plugin against the reference ops");
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            return usage(("unknown flag " + a).c_str());
        } else if (plugin.empty()) {
            plugin = a;
        } else {
            return usage("only one plugin per run");
        }
    }

    std::vector<hetero::conformance::Case> cases;
    for (auto& c : hetero::conformance::all_cases())
        if (filter.empty() || c.name.find(filter) != std::string::npos) cases.push_back(std::move(c));
    if (list) {
        for (const auto& c : cases) std::printf("%s\n", c.name.c_str());
        return 0;
    }
    if (plugin.empty()) return usage("no plugin given");

    void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "hetero-conformance: cannot load %s: %s\n", plugin.c_str(), dlerror());
        return 2;
    }
    auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(lib, HETERO_EP_ENTRY_SYMBOL));
    if (!init) {
        std::fprintf(stderr, "hetero-conformance: %s exports no %s: it is not a hetero provider\n", plugin.c_str(), HETERO_EP_ENTRY_SYMBOL);
        return 2;
    }
    static const hetero_host_api host = {sizeof(hetero_host_api), HETERO_ABI_VERSION, nullptr, &host_log};
    const char* reason = nullptr;
    const hetero_ep_api* api = init(&host, HETERO_ABI_VERSION, &reason);
    if (!api) {
        std::fprintf(stderr, "hetero-conformance: %s refused to start: %s\n", plugin.c_str(), reason ? reason : "no reason given");
        return 2;
    }
    if (HETERO_ABI_MAJOR_OF(api->abi_version) != HETERO_ABI_VERSION_MAJOR || api->struct_size < sizeof(hetero_ep_api)) {
        std::fprintf(stderr, "hetero-conformance: %s speaks ABI %u.%u (table of %u bytes); this kit checks ABI %u.%u\n", plugin.c_str(),
                     HETERO_ABI_MAJOR_OF(api->abi_version), HETERO_ABI_MINOR_OF(api->abi_version), api->struct_size,
                     HETERO_ABI_VERSION_MAJOR, HETERO_ABI_VERSION_MINOR);
        return 2;
    }

    std::vector<std::string> keys, values;
    for (const auto& t : option_text) {
        const size_t eq = t.find('=');
        keys.push_back(t.substr(0, eq));
        values.push_back(t.substr(eq + 1));
    }
    std::vector<hetero_option> options;
    for (size_t i = 0; i < keys.size(); ++i) options.push_back({keys[i].c_str(), values[i].c_str()});
    hetero_ep* ep = nullptr;
    if (api->create(options.data(), options.size(), &ep) != HETERO_OK || !ep) {
        std::fprintf(stderr, "hetero-conformance: provider %s did not start: %s\n", api->name, api->last_error());
        return 2;
    }
    const uint32_t n_devices = api->device_count(ep);  // the provider may discover its devices only now
    if (n_devices == 0) {
        std::fprintf(stderr, "hetero-conformance: provider %s has no device: %s\n", api->name, api->last_error());
        api->destroy(ep);
        return 2;
    }
    if (device >= 0 && uint32_t(device) >= n_devices) {
        std::fprintf(stderr, "hetero-conformance: provider %s has %u device(s); device %ld does not exist\n", api->name, n_devices, device);
        api->destroy(ep);
        return 2;
    }

    int passed = 0, skipped = 0, failed = 0;
    for (uint32_t d = 0; d < n_devices; ++d) {
        if (device >= 0 && d != uint32_t(device)) continue;
        hetero_device_props props{};
        props.struct_size = sizeof(props);
        props.abi_version = HETERO_ABI_VERSION;
        if (api->device_props(ep, d, &props) == HETERO_OK) {
            std::printf("provider %s %s, device %u: %s (%s)\n", api->name, api->version, d, props.name, props.driver);
            if (HETERO_ABI_MINOR_OF(api->abi_version) >= 1 && HETERO_HAS_FIELD(hetero_device_props, &props, compile_seconds_hint))
                std::printf("  resource '%s', launch %.3g s, compile %.3g s\n", props.resource, props.launch_seconds_hint,
                            props.compile_seconds_hint);
        }
        for (const auto& c : cases) {
            const auto r = hetero::conformance::run_case(*api, ep, d, c);
            const char* verdict = r.skipped ? "SKIP" : r.passed ? "PASS" : "FAIL";
            if (!r.passed || g_verbose) std::printf("%s %s [device %u]: %s\n", verdict, c.name.c_str(), d, r.message.c_str());
            (r.skipped ? skipped : r.passed ? passed : failed) += 1;
            std::fflush(stdout);
        }
    }
    std::printf("%d passed, %d skipped, %d failed\n", passed, skipped, failed);
    api->destroy(ep);
    // The plugin stays loaded: the process ends next and unloading buys nothing.
    return failed ? 1 : 0;
}
