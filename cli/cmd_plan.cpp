// hetero plan: which device would run which part of a model.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

namespace hetero::cli {

void add_plan_command(CLI::App& app) {
    struct Opts {
        ProviderFlags providers;
        std::string model, tokenizer;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("plan", "show how a model is split across devices");
    cmd->add_option("-m,--model", o->model, "GGUF file or llama2.c checkpoint (.bin)");
    cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.bin for a llama2.c checkpoint");
    o->providers.add_to(*cmd);
    cmd->callback([o] {
        Runtime rt = open_runtime(o->providers);
        OpenedModel m = open_model(o->model.empty() ? default_model_path() : o->model, o->tokenizer);
        const auto& hp = m.file.hparams;
        fmt::print("model: {} ({}, {} layers, embedding {}, {} heads / {} kv heads, vocab {})\n", m.path, hp.arch, hp.n_layer,
                   hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_vocab);
        fmt::print("{}\n", plan_even_layers(int(hp.n_layer), devices_for_model(m.file, rt.devices, context_length(hp, 0))).describe());
    });
}

}  // namespace hetero::cli
