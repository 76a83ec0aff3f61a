// The JSON configuration: where to look for plugins, which providers to use
// in which order, which of their devices, and provider-specific options.
//
//   {
//     "plugin_dirs": ["/opt/vendor/hetero-plugins"],
//     "providers": [
//       {"name": "cpu", "options": {"threads": 2}},
//       {"name": "opencl", "devices": ["NVIDIA"], "enabled": true}
//     ],
//     "plan": {
//       "pin":   [{"layers": "0-3", "device": "opencl:0"},
//                 {"layers": "all", "op": "ffn_down", "device": "cpu:0"}],
//       "split": [{"layers": "all", "op": "attn_q", "devices": ["cpu:0", "vulkan:0"], "ratio": [1, 3]}],
//       "splits": true
//     }
//   }
//
// "plan" constrains the partition solver: "pin" puts layers (their home:
// norms, attention and KV cache) or one matmul of them ("op": attn_q, attn_k,
// attn_v, attn_output, ffn_gate, ffn_up, ffn_down, output; or "matmuls",
// every one of them) on a device;
// "split" cuts matmuls (all of a layer's, or "op") by output rows across
// devices in the given proportions (equal when "ratio" is absent); "splits":
// false forbids the solver's own row splits. "layers" is "all", "head", "N"
// or "A-B".
//
// Listing providers selects them, in priority order. Unknown keys and wrong
// types are errors naming the key and the file.
#pragma once

#include <hetero/registry.hpp>
#include <hetero/solver/plan_constraints.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hetero {

struct ProviderConfig {
    std::string name;
    bool enabled = true;
    std::vector<std::string> devices;  // device indices ("0") or name substrings; empty = all
    std::map<std::string, std::string> options;
};

struct Config {
    std::string source;  // file it came from, for messages
    std::vector<std::string> plugin_dirs;
    std::vector<ProviderConfig> providers;  // empty = every provider found
    PlanConstraints plan;

    static Config parse(const std::string& json_text, const std::string& source);
    static Config load(const std::string& path);
    // --config FILE if given, else $XDG_CONFIG_HOME/hetero/config.json (or ~/.config/...) when it exists.
    static Config load_default(const std::optional<std::string>& explicit_path);

    // Registry options: dirs, enabled providers in order, options.
    RegistryOptions registry_options() const;
    bool device_allowed(const std::string& provider, uint32_t index, const std::string& device_name) const;
    // Restricts the providers to `names` (e.g. from --providers), keeping other settings.
    void select_providers(const std::vector<std::string>& names);
};

}  // namespace hetero
