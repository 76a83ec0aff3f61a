// hetero convert llama2c IN.bin TOKENIZER.bin OUT.gguf: checkpoint to GGUF.
#include "commands.hpp"

#include <hetero/model/convert.hpp>

#include <fmt/format.h>

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
        ->check(CLI::IsMember({"f32", "f16", "q8_0", "q4_0"}));
    l2c->callback([o] {
        const std::map<std::string, uint32_t> types = {
            {"f32", HETERO_DTYPE_F32}, {"f16", HETERO_DTYPE_F16}, {"q8_0", HETERO_DTYPE_Q8_0}, {"q4_0", HETERO_DTYPE_Q4_0}};
        convert_llama2c_to_gguf(o->in, o->tokenizer, o->out, types.at(o->type));
        fmt::print(stderr, "wrote {}\n", o->out);
    });
}

}  // namespace hetero::cli
