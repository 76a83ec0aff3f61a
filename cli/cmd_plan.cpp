// hetero plan: which device would run which part of a model, and with
// --schedule what each device runs in which order.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/schedule/schedule.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero::cli {

namespace {

// The schedules a session would run for the request: the first prompt chunk
// (when more than one token) and a decode step.
std::vector<Schedule> request_schedules(const ModelFile& model, const Plan& plan, const PlanRequest& req) {
    const int32_t chunk = std::min(req.prompt_len, chunk_limit(plan, req.max_batch, req.n_ctx));
    std::vector<uint32_t> cache(size_t(model.hparams.n_layer));
    for (size_t l = 0; l < cache.size(); ++l) cache[l] = cache_dtype(req.cache_type, plan.devices[plan.layers[l].home].props);
    std::vector<Schedule> out = {make_schedule(build_model_graph(model, chunk, req.n_ctx, cache), plan)};
    if (chunk > 1) out.push_back(make_schedule(build_model_graph(model, 1, req.n_ctx, cache), plan));
    return out;
}

}  // namespace

void add_plan_command(CLI::App& app) {
    struct Opts {
        ProviderFlags providers;
        std::string model, tokenizer;
        int32_t prompt_len = 128, n_generate = 128, ctx = 0;
        bool json = false;
        bool schedule = false;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = add_model_command(app, "plan", "show how a model is split across devices", *o);
    cmd->add_option("--prompt-len", o->prompt_len, "prompt length the prefill plan is made for")->check(CLI::PositiveNumber);
    cmd->add_option("-n,--n-predict", o->n_generate, "tokens to generate, weighing decode against prefill")->check(CLI::PositiveNumber);
    cmd->add_option("-c,--ctx-size", o->ctx, "context size (default: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", o->json, "print the plan as JSON");
    cmd->add_flag("--schedule", o->schedule, "also print the schedule: each device's tasks in order, hand-overs and waits (prefill chunk and decode)");
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
        const std::vector<Schedule> schedules = o->schedule ? request_schedules(m.file, planned.plan, req) : std::vector<Schedule>{};
        if (o->json && o->schedule) {
            std::string list;
            for (const Schedule& s : schedules) list += (list.empty() ? "" : ", ") + schedule_to_json(s, planned.plan);
            fmt::print("{{\"plan\": {}, \"schedules\": [{}]}}\n", planned.plan.to_json(), list);
            return;
        }
        if (o->json) {
            fmt::print("{}\n", planned.plan.to_json());
            return;
        }
        fmt::print("model: {} ({}, {} layers, embedding {}, feed-forward {}, {} heads / {} kv heads of {}, vocab {})\n", m.path, hp.arch,
                   hp.n_layer, hp.n_embd, hp.n_ff, hp.n_head, hp.n_head_kv, hp.head_dim, hp.n_vocab);
        fmt::print("{}\n", planned.plan.describe());
        if (planned.plan.devices.size() > 1) fmt::print("{}", describe_candidates(single_device_candidates(planned, m.file, req), planned, req));
        for (const Schedule& s : schedules) fmt::print("\n{}", describe_schedule(s, planned.plan));
        for (const std::string& n : planned.notes) fmt::print("note: {}\n", n);
        for (const UnusedProvider& u : planned.unused) fmt::print("note: {} not used: {}\n", u.provider, u.reason);
    });
}

}  // namespace hetero::cli
