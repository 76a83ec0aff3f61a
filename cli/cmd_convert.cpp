// hetero convert llama2c IN.bin TOKENIZER.bin OUT.gguf: checkpoint to GGUF.
// hetero convert hf DIR OUT.gguf: a Hugging Face model folder to GGUF.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/model/convert.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/hf_convert.hpp>
#include <hetero/model/quantize.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>


namespace hetero::cli {

void add_convert_command(CLI::App& app) {
    struct Opts {
        std::string in, tokenizer, out, type = "f32";
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("convert", "convert model files to GGUF");
    cmd->require_subcommand(1);
    CLI::App* l2c = cmd->add_subcommand("llama2c", "llama2.c checkpoint + tokenizer.bin to GGUF");
    l2c->add_option("checkpoint", o->in, "llama2.c .bin")->required()->check(CLI::ExistingFile);
    l2c->add_option("tokenizer", o->tokenizer, "llama2.c tokenizer.bin")->required()->check(CLI::ExistingFile);
    l2c->add_option("output", o->out, "GGUF file to write")->required();
    l2c->add_option("--type", o->type, "weight type of the matrices: f32, f16, q8_0, q4_0")
        ->check(CLI::IsMember(kWeightTypeNames));
    l2c->callback([o] {
        convert_llama2c_to_gguf(o->in, o->tokenizer, o->out, weight_type_from_name(o->type));
        fmt::print(stderr, "wrote {}\n", o->out);
    });

    struct HfOpts {
        std::string dir, out, type = "f16";
        int threads = 0;
    };
    auto h = std::make_shared<HfOpts>();
    std::string types;
    for (const std::string& n : hf_convert_type_names()) types += (types.empty() ? "" : ", ") + n;
    for (const std::string& n : quantize_type_names())
        if (n != "Q8_0" && n != "F16" && n != "BF16" && n != "F32") types += ", " + n;  // those four are listed in lower case
    CLI::App* hf = cmd->add_subcommand("hf", "Hugging Face model folder (config.json, *.safetensors, tokenizer files) to GGUF");
    hf->add_option("model_dir", h->dir, "folder with config.json, model.safetensors (or the index and its shards), tokenizer.json or tokenizer.model")
        ->required()
        ->check(CLI::ExistingDirectory);
    hf->add_option("output", h->out, "GGUF file to write")->required();
    hf->add_option("--type", h->type, "weight type of the matrices (default f16): " + types + " (any case)");
    hf->add_option("-t,--threads", h->threads, "threads encoding rows (0 = one per hardware thread)")->check(CLI::NonNegativeNumber);
    hf->callback([h] {
        const HfConvertResult r = convert_hf_to_gguf(h->dir, h->out, {h->type, h->threads});
        std::map<std::string, int> counts;
        for (const QuantizedTensor& t : r.tensors) ++counts[ggml_type_name(t.ggml_type)];
        std::string summary;
        for (const auto& [type, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, type);
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(h->out, ec);
        fmt::print(stderr, "wrote {} ({:.1f} MiB): {}, {} tokens, {} tensors: {}\n", h->out, ec ? 0.0 : double(bytes) / (1 << 20), r.arch,
                   r.n_tokens, r.tensors.size(), summary);
    });
}

}  // namespace hetero::cli
