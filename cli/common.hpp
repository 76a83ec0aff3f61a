// What every subcommand shares: the provider selection flags (turned into
// the library's RuntimeOptions), option parsing helpers, trace output.
#pragma once

#include <hetero/config.hpp>
#include <hetero/engine/planning.hpp>
#include <hetero/engine/runtime.hpp>
#include <hetero/engine/shipped_files.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/trace.hpp>
#include <hetero/solver/planner.hpp>

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hetero::cli {

struct ProviderFlags {
    std::optional<std::string> config_path;
    std::string providers;  // comma-separated, empty = config / all
    int threads = 0;        // 0 = provider default
    bool retry_crashed = false;  // load quarantined plugins anyway
    // Provider options a command sets on top of the config's (provider -> key -> value).
    std::map<std::string, std::map<std::string, std::string>> option_overrides;
    void add_to(CLI::App& app);
    RuntimeOptions runtime_options() const;
    Config load_config() const;
};

// The providers the flags and the config select (hetero::open_runtime); a
// note on stderr for each provider left out after a crash.
Runtime open_runtime(const ProviderFlags& flags);

// Writes a trace and prints, per device, predicted vs measured executable time.
void write_trace(const TraceRecorder& trace, const std::string& path);

std::vector<std::string> split_list(const std::string& s);

// What the commands that run a model over windows of a text file
// (perplexity, calibrate) take in common.
struct TextWindowOptions {
    ProviderFlags providers;
    std::string model, tokenizer, text_file;
    int32_t window = 256;  // tokens per forward pass, each from position 0
};

// `tokens` cut into consecutive windows of at most `window` tokens (each is
// evaluated from position 0: perplexity, calibration).
std::vector<std::vector<int32_t>> token_windows(const std::vector<int32_t>& tokens, int32_t window);

// A text file (a regular file of at most 64 MiB); errors name it.
std::string read_text_file(const std::string& path);

// "f32", "f16", "q8_0", "q4_0" -> hetero_dtype (the choices CLI11 checks against).
inline const std::vector<std::string> kWeightTypeNames = {"f32", "f16", "q8_0", "q4_0"};
// gen-model also writes GGUF's other block types, K-quants and hetero's E0M4.
inline const std::vector<std::string> kGenWeightTypeNames = {"f32",  "f16",  "q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                                                             "iq4_nl", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "e0m4"};
uint32_t weight_type_from_name(const std::string& name);

// -m/--model and --tokenizer of the commands that open a model.
void add_model_options(CLI::App& cmd, std::string& model, std::string& tokenizer);
// The subcommand NAME of `app` on a model: -m and --tokenizer set the
// fields of `o` (the command's options) of those names.
template <class Options>
CLI::App* add_model_command(CLI::App& app, const std::string& name, const std::string& help, Options& o) {
    CLI::App* cmd = app.add_subcommand(name, help);
    add_model_options(*cmd, o.model, o.tokenizer);
    return cmd;
}

// --cache-type of `run` and `bench` (see hetero::CacheType).
void add_cache_type_option(CLI::App& cmd, std::string& value);

// A random seed as typed: decimal digits only, 0 .. 18446744073709551615.
// A sign, other characters, an empty string or a value beyond 2^64-1 throw
// CLI::ValidationError naming `option`, the value and the valid range.
uint64_t parse_seed(const std::string& text, const std::string& option);
// A seed option (`names` e.g. "-s,--seed") of any command: the value is
// parsed with parse_seed, so nothing is wrapped or saturated silently.
CLI::Option* add_seed_option(CLI::App& cmd, const std::string& names, uint64_t& seed, const std::string& help);

}  // namespace hetero::cli
