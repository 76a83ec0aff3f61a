#include "child_work.hpp"

#include "model_coverage.hpp"
#include "plugin_loader.hpp"

#include <chrono>
#include <cstdio>
#include <functional>

namespace hetero::conformance {
namespace {

// Loads the plugin and calls work(device) for each selected device; Refused
// or Done ends the record stream.
int on_each_device(const ToolOptions& options, RecordWriter& out, const std::function<void(const LoadedProvider&, uint32_t)>& work) {
    LoadedProvider p;
    try {
        p = load_provider(options.plugin, options.provider_options, options.verbose, out);
    } catch (const PluginRefused& r) {
        out.send(RecordKind::Refused, {r.message});
        return 2;
    }
    if (options.device >= 0 && uint32_t(options.device) >= p.n_devices) {
        out.send(RecordKind::Refused, {std::string("provider ") + p.api->name + " has " + std::to_string(p.n_devices) + " device(s); device " +
                                       std::to_string(options.device) + " does not exist"});
        p.api->destroy(p.ep);
        return 2;
    }
    for (uint32_t d = 0; d < p.n_devices; ++d) {
        if (options.device >= 0 && d != uint32_t(options.device)) continue;
        out.send(RecordKind::Phase, {"asking device_props of device " + std::to_string(d)});
        out.send(RecordKind::Device, {std::to_string(d), device_title(*p.api, p.ep, d)});
        work(p, d);
    }
    out.send(RecordKind::Phase, {std::string("destroying provider ") + p.api->name + " (destroy)"});
    p.api->destroy(p.ep);
    // The plugin stays loaded: the process ends next and unloading buys nothing.
    out.send(RecordKind::Done);
    return 0;
}

}  // namespace

int run_cases_child(const ToolOptions& options, const std::vector<Case>& cases, RecordWriter& out) {
    return on_each_device(options, out, [&](const LoadedProvider& p, uint32_t d) {
        for (size_t i = 0; i < cases.size(); ++i) {
            out.send(RecordKind::Start, {std::to_string(d), std::to_string(i)});
            const auto t0 = std::chrono::steady_clock::now();
            const CaseResult r = run_case(*p.api, p.ep, d, cases[i]);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.6f", seconds);
            out.send(RecordKind::Result, {std::to_string(d), std::to_string(i), r.skipped ? "skip" : r.passed ? "pass" : "fail", r.skip_op,
                                          r.skip_dtype, secs, r.message});
        }
    });
}

int model_coverage_child(const ToolOptions& options, const ModelNeeds& needs, RecordWriter& out) {
    return on_each_device(options, out, [&](const LoadedProvider& p, uint32_t d) {
        hetero_device_props props{};
        props.struct_size = sizeof props;
        props.abi_version = HETERO_ABI_VERSION;
        p.api->device_props(p.ep, d, &props);
        out.send(RecordKind::Phase, {"building the model's graphs (libhetero)"});
        send_model_coverage(*p.api, p.ep, d, needs.rows(props), out);
    });
}

}  // namespace hetero::conformance
