#include <hetero/engine/runtime.hpp>

#include <hetero/engine/errors.hpp>

#include <fmt/format.h>

namespace hetero {

Config load_runtime_config(const RuntimeOptions& options) {
    Config c = options.config_json ? Config::parse(*options.config_json, options.config_source)
                                   : Config::load_default(options.config_path);
    if (!options.providers.empty()) c.select_providers(options.providers);
    return c;
}

Runtime open_runtime(const RuntimeOptions& options) {
    Runtime rt;
    try {
        rt.config = load_runtime_config(options);
    } catch (const Error& e) {
        throw ConfigError(e.what());
    }
    RegistryOptions ro = rt.config.registry_options();
    ro.plugin_dirs.insert(ro.plugin_dirs.end(), options.plugin_dirs.begin(), options.plugin_dirs.end());
    ro.retry_crashed = options.retry_crashed;
    if (options.threads > 0) ro.provider_options["cpu"]["threads"] = std::to_string(options.threads);
    for (const auto& [provider, values] : options.option_overrides)
        for (const auto& [k, v] : values) ro.provider_options[provider][k] = v;
    rt.registry = std::make_unique<Registry>(ro);
    for (const std::string& wanted : ro.enabled) {
        if (!wanted.empty() && !rt.registry->find(wanted) && !rt.registry->left_out(wanted))
            throw NotFoundError(fmt::format("provider '{}' is not available\n{}", wanted, rt.registry->describe_search()));
    }
    // Providers discover their devices here (GPU drivers load now, not when the plugins load).
    const bool explicit_list = !rt.config.providers.empty();
    rt.devices = available_devices(rt.registry->providers(), [&](const Provider& p, uint32_t d, const hetero_device_props& props) {
        if ((props.flags & HETERO_DEVICE_FLAG_SIMULATED_TIME) && !explicit_list) return false;
        return rt.config.device_allowed(p.name(), d, props.name);
    });
    if (rt.devices.empty())
        throw NoDeviceError("no usable device: no provider loaded or none reported a device\n" + rt.registry->describe_search());
    return rt;
}

}  // namespace hetero
