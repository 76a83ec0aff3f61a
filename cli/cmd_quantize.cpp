// hetero quantize IN.gguf OUT.gguf TYPE: a GGUF re-encoded as one of
// llama-quantize's file types (hetero/model/quantize.hpp).
#include "commands.hpp"

#include <hetero/model/ggml_types.hpp>
#include <hetero/model/quantize.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>

namespace hetero::cli {

void add_quantize_command(CLI::App& app) {
    struct Opts {
        std::string in, out, type;
        int threads = 0;
        bool allow_requantize = false;
    };
    auto o = std::make_shared<Opts>();
    std::string names;
    for (const std::string& n : quantize_type_names()) names += (names.empty() ? "" : ", ") + n;
    CLI::App* cmd = app.add_subcommand("quantize", "re-encode a GGUF's weights as Q4_K_M, Q8_0, ... (llama-quantize's file types and mixes)");
    cmd->add_option("input", o->in, "GGUF file to read (F32, F16 or BF16 weights)")->required()->check(CLI::ExistingFile);
    cmd->add_option("output", o->out, "GGUF file to write")->required();
    cmd->add_option("type", o->type, "file type: " + names + " (any case)")->required();
    cmd->add_option("-t,--threads", o->threads, "threads encoding rows (0 = one per hardware thread)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--allow-requantize", o->allow_requantize,
                  "re-encode tensors that are already block-quantized (a second rounding error; start from F16/F32 where you can)");
    cmd->callback([o] {
        const std::vector<QuantizedTensor> tensors = quantize_gguf_file(o->in, o->out, {o->type, o->threads, o->allow_requantize});
        std::map<std::string, int> counts;
        for (const QuantizedTensor& t : tensors) ++counts[ggml_type_name(t.ggml_type)];
        std::string summary;
        for (const auto& [type, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, type);
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(o->out, ec);
        fmt::print(stderr, "wrote {} ({:.1f} MiB): {} tensors: {}\n", o->out, ec ? 0.0 : double(bytes) / (1 << 20), tensors.size(), summary);
    });
}

}  // namespace hetero::cli
