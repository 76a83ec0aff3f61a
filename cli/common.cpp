#include "common.hpp"
#include "commands.hpp"

#include <hetero/profile/profile.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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
    app.add_flag("--retry-crashed", retry_crashed,
                 "load provider plugins quarantined after crashing a run (their quarantine is lifted; see docs/providers.md)");
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

RuntimeOptions ProviderFlags::runtime_options() const {
    RuntimeOptions o;
    o.config_path = config_path;
    o.providers = split_list(providers);
    o.threads = threads;
    o.retry_crashed = retry_crashed;
    o.option_overrides = option_overrides;
    return o;
}

Config ProviderFlags::load_config() const { return load_runtime_config(runtime_options()); }

Runtime open_runtime(const ProviderFlags& flags) {
    Runtime rt = hetero::open_runtime(flags.runtime_options());
    for (const PluginRecord& r : rt.registry->records())
        if (!r.left_out.empty()) fmt::print(stderr, "note: provider {} left out: {}\n", r.provider, r.left_out);
    return rt;
}

void write_trace(const TraceRecorder& trace, const std::string& path) {
    trace.write(path);
    fmt::print(stderr, "trace written to {}\n", path);
    for (const auto& a : trace.accuracy())
        fmt::print(stderr, "  {}: {} executables, {} {:.2f} ms, predicted {:.2f} ms, median |error| {:.1f} %\n", a.track, a.count,
                   a.simulated ? "simulated" : "measured", a.measured * 1e3, a.predicted * 1e3, a.median_abs_error * 100);
    // One-off work: what the first forward of each chunk size paid before its executes.
    const auto uploads = trace.totals("upload");
    for (const auto& [track, c] : trace.totals("compile")) {
        const auto u = uploads.find(track);
        fmt::print(stderr, "  {}: {} compiles {:.1f} ms; {:.0f} MiB of weights uploaded in {:.1f} ms\n", track, c.count, c.seconds * 1e3,
                   u == uploads.end() ? 0.0 : double(u->second.bytes) / (1 << 20), u == uploads.end() ? 0.0 : u->second.seconds * 1e3);
    }
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
    // In the order the error lists them; a K-quant also as its dtype name spells it ("q4_K").
    static const uint32_t kTypes[] = {HETERO_DTYPE_F32,  HETERO_DTYPE_F16,  HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0,  HETERO_DTYPE_Q4_1,
                                      HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K,
                                      HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_E0M4};
    std::string known;
    for (uint32_t t : kTypes) {
        const std::string spelled = sdk::dtype_name(t);
        std::string lower = spelled;
        for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (name == lower || name == spelled) return t;
        known += (known.empty() ? "" : ", ") + lower;
    }
    throw Error("unknown weight type '" + name + "' (known: " + known + ")");
}

}  // namespace hetero::cli
