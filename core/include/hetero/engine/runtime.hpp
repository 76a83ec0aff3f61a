// The providers an application runs on: the config read, the plugins loaded,
// the usable devices picked. What `hetero run`, `chat` and `serve` open first,
// and what hetero_runtime_open() opens for an embedding app.
#pragma once

#include <hetero/config.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hetero {

struct RuntimeOptions {
    // A JSON config file; when unset, $XDG_CONFIG_HOME/hetero/config.json if it exists.
    std::optional<std::string> config_path;
    // Config text instead of a file (an app that builds its config in memory);
    // wins over config_path. `config_source` names it in messages.
    std::optional<std::string> config_json;
    std::string config_source = "<config>";
    // Provider names in priority order; empty = the config's, or every one found.
    std::vector<std::string> providers;
    int threads = 0;  // the cpu provider's threads; 0 = its default
    // Directories searched for plugins after the config's and the default ones.
    std::vector<std::string> plugin_dirs;
    // Provider options on top of the config's (provider -> key -> value).
    std::map<std::string, std::map<std::string, std::string>> option_overrides;
    // Load plugins quarantined after a crash anyway (RegistryOptions::retry_crashed).
    bool retry_crashed = false;
};

struct Runtime {
    Config config;
    std::unique_ptr<Registry> registry;
    std::vector<DeviceRef> devices;  // usable devices in priority order
};

// The config the options describe (file or text, then the provider list).
Config load_runtime_config(const RuntimeOptions& options);

// Loads the plugins and discovers devices. A named provider whose plugin was
// left out after a crash (PluginRecord::left_out) is not an error: the
// others run without it. A device whose times are simulated
// (npu_emu) is used only when its provider is named, since it would plan real
// runs with a phone's clock. Throws hetero::Error, with the search report,
// when a named provider is missing or no device is usable.
Runtime open_runtime(const RuntimeOptions& options);

}  // namespace hetero
