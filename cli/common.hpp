// What every subcommand shares: provider selection flags, building the
// registry from the config, picking devices, finding the default model.
#pragma once

#include <hetero/config.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hetero::cli {

struct ProviderFlags {
    std::optional<std::string> config_path;
    std::string providers;  // comma-separated, empty = config / all
    int threads = 0;        // 0 = provider default
    void add_to(CLI::App& app);
    Config load_config() const;
};

struct Runtime {
    Config config;
    std::unique_ptr<Registry> registry;
    std::vector<DeviceRef> devices;  // usable devices in priority order
};

// Loads plugins per the flags/config; throws with the search report when no
// device is usable.
Runtime open_runtime(const ProviderFlags& flags);

// The shipped default model: next to an installed binary or in the source tree.
std::string default_model_path();

std::vector<std::string> split_list(const std::string& s);

// "f32", "f16", "q8_0", "q4_0" -> hetero_dtype (the choices CLI11 checks against).
inline const std::vector<std::string> kWeightTypeNames = {"f32", "f16", "q8_0", "q4_0"};
uint32_t weight_type_from_name(const std::string& name);

// --cache-type of `run` and `bench` (see hetero::CacheType).
void add_cache_type_option(CLI::App& cmd, std::string& value);

}  // namespace hetero::cli
