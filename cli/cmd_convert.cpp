// hetero convert llama2c IN.bin TOKENIZER.bin OUT.gguf: checkpoint to GGUF.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/model/convert.hpp>

#include <fmt/format.h>


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
}

}  // namespace hetero::cli
