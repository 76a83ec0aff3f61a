// hetero providers: every plugin file found, whether it loaded, and its devices.
// Listing devices makes each provider discover them; that time is reported
// apart from loading (open + create).
#include "commands.hpp"
#include "common.hpp"

#include <hetero/sdk/device_kind.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hetero::cli {

namespace {

std::vector<std::string> dtype_names(uint64_t mask) {
    std::vector<std::string> out;
    for (uint32_t d = 0; d < HETERO_DTYPE_COUNT_1_3; ++d)
        if (mask & HETERO_DTYPE_BIT(d)) out.emplace_back(sdk::dtype_name(d));
    return out;
}

void list(const ProviderFlags& flags, bool as_json) {
    const Config config = flags.load_config();
    RegistryOptions ro = config.registry_options();
    if (flags.threads > 0) ro.provider_options["cpu"]["threads"] = std::to_string(flags.threads);
    Registry reg(ro);
    nlohmann::json j = {{"abi_version", fmt::format("{}.{}", HETERO_ABI_VERSION_MAJOR, HETERO_ABI_VERSION_MINOR)},
                        {"plugin_dirs", reg.searched_dirs()}, {"plugins", nlohmann::json::array()}};
    for (const auto& r : reg.records()) {
        nlohmann::json pj = {{"path", r.path}, {"status", r.status}, {"loaded", r.loaded},
                             {"open_ms", r.open_seconds * 1e3}, {"create_ms", r.create_seconds * 1e3}};
        if (!r.provider.empty()) pj["provider"] = r.provider;
        if (!r.version.empty()) pj["version"] = r.version;
        if (r.abi_version) pj["abi_version"] = fmt::format("{}.{}", HETERO_ABI_MAJOR_OF(r.abi_version), HETERO_ABI_MINOR_OF(r.abi_version));
        if (Provider* p = r.loaded ? reg.find(r.provider) : nullptr) {
            pj["devices"] = nlohmann::json::array();
            const uint32_t n = p->device_count();
            pj["discover_ms"] = p->discover_seconds() * 1e3;
            if (n == 0) {
                pj["status"] = r.status + ", " + p->device_summary();
                pj["no_devices_reason"] = p->no_devices_reason();
            }
            for (uint32_t d = 0; d < n; ++d) {
                const hetero_device_props dp = p->device_props(d);
                pj["devices"].push_back({{"index", d},
                                         {"name", dp.name},
                                         {"kind", sdk::device_kind_name(dp.kind)},
                                         {"driver", dp.driver},
                                         {"memory_bytes", dp.memory_bytes},
                                         {"unified_memory", bool(dp.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY)},
                                         {"static_shapes", bool(dp.flags & HETERO_DEVICE_FLAG_STATIC_SHAPES)},
                                         {"dtypes", dtype_names(dp.dtype_mask)},
                                         {"peak_gflops_hint", dp.peak_gflops},
                                         {"peak_bandwidth_gbs_hint", dp.peak_bandwidth_gbs},
                                         {"compute_units", dp.compute_units},
                                         {"subgroup_size", dp.subgroup_size},
                                         {"enabled_by_config", config.device_allowed(p->name(), d, dp.name)}});
            }
        }
        j["plugins"].push_back(pj);
    }
    if (as_json) {
        fmt::print("{}\n", j.dump(2));
        return;
    }
    fmt::print("ABI {}\nplugin directories:\n", j["abi_version"].get<std::string>());
    for (const auto& d : reg.searched_dirs()) {
        const std::string st = reg.dir_status(d);
        fmt::print("  {}{}\n", d, st.empty() ? "" : " (" + st + ")");
    }
    fmt::print("plugins:\n");
    for (const auto& pj : j["plugins"]) {
        fmt::print("  {} (open {:.1f} ms, create {:.1f} ms{})\n    {}{}\n", pj["path"].get<std::string>(), pj["open_ms"].get<double>(),
                   pj["create_ms"].get<double>(),
                   pj.contains("discover_ms") ? fmt::format(", discover {:.1f} ms", pj["discover_ms"].get<double>()) : "",
                   pj.contains("provider") ? fmt::format("provider {} {} (ABI {}): ", pj["provider"].get<std::string>(),
                                                         pj.value("version", ""), pj.value("abi_version", "?"))
                                           : "",
                   pj["status"].get<std::string>());
        if (!pj.contains("devices")) continue;
        for (const auto& d : pj["devices"]) {
            fmt::print("    device {}: {} [{}] {}\n", d["index"].get<uint32_t>(), d["name"].get<std::string>(),
                       d["kind"].get<std::string>(), d["driver"].get<std::string>());
            fmt::print("      memory {:.1f} GiB{}{}, compute units {}, dtypes {}\n", d["memory_bytes"].get<double>() / (1 << 30),
                       d["unified_memory"].get<bool>() ? ", unified with host" : "",
                       d["static_shapes"].get<bool>() ? ", static shapes" : "", d["compute_units"].get<uint32_t>(),
                       fmt::join(d["dtypes"].get<std::vector<std::string>>(), ","));
        }
    }
    if (reg.providers().empty()) fmt::print("no provider loaded\n");
}

}  // namespace

void add_providers_command(CLI::App& app) {
    auto flags = std::make_shared<ProviderFlags>();
    auto as_json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("providers", "list plugins, their status and devices");
    cmd->add_flag("--json", *as_json, "machine-readable output");
    flags->add_to(*cmd);
    cmd->callback([flags, as_json] { list(*flags, *as_json); });
}

}  // namespace hetero::cli
