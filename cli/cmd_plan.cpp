// hetero plan: which device would run which part of a model.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero::cli {

void add_plan_command(CLI::App& app) {
    struct Opts {
        ProviderFlags providers;
        std::string model, tokenizer;
        int32_t prompt_len = 128, n_generate = 128, ctx = 0;
        bool json = false;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("plan", "show how a model is split across devices");
    add_model_options(*cmd, o->model, o->tokenizer);
    cmd->add_option("--prompt-len", o->prompt_len, "prompt length the prefill plan is made for")->check(CLI::PositiveNumber);
    cmd->add_option("-n,--n-predict", o->n_generate, "tokens to generate, weighing decode against prefill")->check(CLI::PositiveNumber);
    cmd->add_option("-c,--ctx-size", o->ctx, "context size (default: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", o->json, "print the plan as JSON");
    o->providers.add_to(*cmd);
    cmd->callback([o] {
        Runtime rt = open_runtime(o->providers);
        OpenedModel m = open_model(o->model.empty() ? default_model_path() : o->model, o->tokenizer);
        const auto& hp = m.file.hparams;
        PlanRequest req;
        req.n_ctx = context_length(hp, o->ctx);
        req.prompt_len = std::min(o->prompt_len, req.n_ctx);
        req.n_generate = o->n_generate;
        const PlannedRun planned = plan_model(rt, m.file, req);
        if (o->json) {
            fmt::print("{}\n", planned.plan.to_json());
            return;
        }
        fmt::print("model: {} ({}, {} layers, embedding {}, {} heads / {} kv heads, vocab {})\n", m.path, hp.arch, hp.n_layer,
                   hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_vocab);
        fmt::print("{}\n", planned.plan.describe());
    });
}

}  // namespace hetero::cli
