#include "common.hpp"
#include "commands.hpp"

#include <hetero/solver/profile.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace hetero::cli {

void ProviderFlags::add_to(CLI::App& app) {
    app.add_option("--config", config_path, "JSON config file (default: $XDG_CONFIG_HOME/hetero/config.json)")
        ->check(CLI::ExistingFile);
    app.add_option("--providers", providers, "comma-separated providers in priority order, e.g. cpu,opencl")
        ->check([](const std::string& v) -> std::string {
            const std::vector<std::string> names = split_list(v);
            if (names.empty()) return "--providers needs at least one provider name";
            for (size_t i = 0; i < names.size(); ++i)
                for (size_t j = 0; j < i; ++j)
                    if (names[i] == names[j]) return "--providers names " + names[i] + " twice";
            return "";
        });
    app.add_option("--threads", threads, "threads for the cpu provider")->check(CLI::PositiveNumber);
}

std::string read_text_file(const std::string& path) {
    constexpr uint64_t kMaxBytes = 64u << 20;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(fmt::format("text {}: not a regular file", path));
    if (std::filesystem::file_size(path, ec) > kMaxBytes) throw Error(fmt::format("text {}: larger than {} bytes", path, kMaxBytes));
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    if (!in && !in.eof()) throw Error(fmt::format("text {}: cannot be read", path));
    return s.str();
}

std::vector<std::vector<int32_t>> token_windows(const std::vector<int32_t>& tokens, int32_t window) {
    std::vector<std::vector<int32_t>> out;
    for (size_t start = 0; start < tokens.size(); start += size_t(window))
        out.emplace_back(tokens.begin() + long(start), tokens.begin() + long(std::min(tokens.size(), start + size_t(window))));
    return out;
}

int& exit_code() {
    static int code = 0;
    return code;
}

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) out.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

Config ProviderFlags::load_config() const {
    Config c = Config::load_default(config_path);
    if (!providers.empty()) c.select_providers(split_list(providers));
    return c;
}

Runtime open_runtime(const ProviderFlags& flags) {
    Runtime rt;
    rt.config = flags.load_config();
    RegistryOptions ro = rt.config.registry_options();
    if (flags.threads > 0) ro.provider_options["cpu"]["threads"] = std::to_string(flags.threads);
    for (const auto& [provider, options] : flags.option_overrides)
        for (const auto& [k, v] : options) ro.provider_options[provider][k] = v;
    rt.registry = std::make_unique<Registry>(ro);
    for (const std::string& wanted : ro.enabled) {
        if (!wanted.empty() && !rt.registry->find(wanted))
            throw Error(fmt::format("provider '{}' is not available\n{}", wanted, rt.registry->describe_search()));
    }
    // Providers discover their devices here (GPU drivers load now, not when the plugins load).
    // A device whose times are simulated (npu_emu) would plan real runs
    // with a phone's clock: it is used only when asked for by name.
    const bool explicit_list = !rt.config.providers.empty();
    rt.devices = available_devices(rt.registry->providers(), [&](const Provider& p, uint32_t d, const hetero_device_props& props) {
        if ((props.flags & HETERO_DEVICE_FLAG_SIMULATED_TIME) && !explicit_list) return false;
        return rt.config.device_allowed(p.name(), d, props.name);
    });
    if (rt.devices.empty())
        throw Error("no usable device: no provider loaded or none reported a device\n" + rt.registry->describe_search());
    return rt;
}

PlannedRun plan_model(const Runtime& rt, const ModelFile& model, PlanRequest request) {
    return plan_on_devices(rt.devices, rt.config.plan, model, request);
}

PlanRequest plan_request(const SessionOptions& so, int32_t n_ctx, int32_t prompt_len, int32_t n_generate) {
    PlanRequest req;
    req.n_ctx = n_ctx;
    req.prompt_len = prompt_len;
    req.n_generate = n_generate;
    req.max_batch = so.max_batch;
    req.cache_type = so.cache_type;
    return req;
}

PlannedRun plan_on_devices(const std::vector<DeviceRef>& all, const PlanConstraints& constraints, const ModelFile& model, PlanRequest request) {
    PlannedRun r;
    const std::vector<DeviceRef> devices = devices_for_model(model, all, request.n_ctx);
    r.cost = make_cost_model(devices, model);
    request.constraints = constraints;
    r.plan = solve_plan(model, devices, *r.cost, request);
    return r;
}

SyncMode sync_mode_from_env() {
    const char* e = std::getenv("HETERO_SYNC");
    return e && std::string(e) == "block" ? SyncMode::block : SyncMode::predicted_poll;
}

void write_trace(const TraceRecorder& trace, const std::string& path) {
    trace.write(path);
    fmt::print(stderr, "trace written to {}\n", path);
    for (const auto& a : trace.accuracy())
        fmt::print(stderr, "  {}: {} executables, {} {:.2f} ms, predicted {:.2f} ms, median |error| {:.1f} %\n", a.track, a.count,
                   a.simulated ? "simulated" : "measured", a.measured * 1e3, a.predicted * 1e3, a.median_abs_error * 100);
}

void add_model_options(CLI::App& cmd, std::string& model, std::string& tokenizer) {
    cmd.add_option("-m,--model", model, "GGUF file or llama2.c checkpoint (.bin)");
    cmd.add_option("--tokenizer", tokenizer, "tokenizer.bin for a llama2.c checkpoint");
}

void add_cache_type_option(CLI::App& cmd, std::string& value) {
    cmd.add_option("--cache-type", value, "KV cache type: auto (f16 on GPU/NPU devices, f32 on CPU devices), f32 or f16")
        ->check(CLI::IsMember({"auto", "f32", "f16"}));
}

uint64_t parse_seed(const std::string& text, const std::string& option) {
    // from_chars for unsigned types takes no sign, but it would stop at the
    // first non-digit: the whole text must be consumed.
    uint64_t value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [end, ec] = std::from_chars(first, last, value, 10);
    if (text.empty() || ec != std::errc() || end != last)
        throw CLI::ValidationError(option, fmt::format("invalid seed '{}': a seed is a decimal integer in 0 .. {}", text, UINT64_MAX));
    return value;
}

CLI::Option* add_seed_option(CLI::App& cmd, const std::string& names, uint64_t& seed, const std::string& help) {
    return cmd
        .add_option_function<std::string>(
            names, [&seed, shown = names.substr(names.rfind(',') + 1)](const std::string& text) { seed = parse_seed(text, shown); }, help)
        ->type_name("UINT64")
        ->default_str(std::to_string(seed));
}

uint32_t weight_type_from_name(const std::string& name) {
    if (name == "f32") return HETERO_DTYPE_F32;
    if (name == "f16") return HETERO_DTYPE_F16;
    if (name == "q8_0") return HETERO_DTYPE_Q8_0;
    if (name == "q4_0") return HETERO_DTYPE_Q4_0;
    if (name == "q4_k" || name == "q4_K") return HETERO_DTYPE_Q4_K;
    if (name == "q5_k" || name == "q5_K") return HETERO_DTYPE_Q5_K;
    if (name == "q6_k" || name == "q6_K") return HETERO_DTYPE_Q6_K;
    if (name == "q4_1") return HETERO_DTYPE_Q4_1;
    if (name == "q5_0") return HETERO_DTYPE_Q5_0;
    if (name == "q5_1") return HETERO_DTYPE_Q5_1;
    if (name == "iq4_nl") return HETERO_DTYPE_IQ4_NL;
    if (name == "q2_k" || name == "q2_K") return HETERO_DTYPE_Q2_K;
    if (name == "q3_k" || name == "q3_K") return HETERO_DTYPE_Q3_K;
    throw Error("unknown weight type '" + name + "' (known: f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k)");
}

std::string default_model_path() { return shipped_file_path("stories260K.gguf"); }

std::string shipped_file_path(const std::string& name) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed = exe.parent_path() / HETERO_MODELS_SUBDIR_FROM_BIN / name;
        if (fs::is_regular_file(installed, ec)) return installed.lexically_normal().string();
    }
    return (fs::path(HETERO_SOURCE_MODELS_DIR) / name).string();
}

}  // namespace hetero::cli
