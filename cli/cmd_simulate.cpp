// hetero simulate: run a plan on a SoC profile in the discrete-event
// simulator and print simulated prefill and decode figures.
#include "commands.hpp"
#include "sim_plans.hpp"

#include <hetero/error.hpp>
#include <hetero/model/model.hpp>
#include <hetero/sim/model_shapes.hpp>
#include <hetero/sim/simulator.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace hetero::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

ShapePolicy shape_policy(const std::string& s) {
    if (s == "compile") return ShapePolicy::compile;
    if (s == "pad") return ShapePolicy::pad;
    if (s == "cut") return ShapePolicy::cut;
    throw Error(fmt::format("unknown --shapes '{}' (known: compile, pad, cut)", s));
}

}  // namespace

void add_simulate_command(CLI::App& app) {
    struct Opts {
        std::string profile, model, shape, wtype = "q4_0", plan = "solver", trace, units, shapes = "compile";
        int32_t prompt_len = 256, n_generate = 32, chunk = 0;
        bool json = false;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("simulate", "simulate a plan on a SoC profile (every figure is simulated)");
    cmd->add_option("--profile", o->profile, "SoC profile: a name (snapdragon-8-gen-3) or a FILE.json")->required();
    auto* m = cmd->add_option("-m,--model", o->model, "GGUF file whose shapes and weight types are simulated");
    auto* s = cmd->add_option("--shape", o->shape, "model shape without a file: llama-8b, llama-7b, llama-3b, tinyllama-1.1b");
    m->excludes(s);
    cmd->add_option("--wtype", o->wtype, "weight type with --shape: q4_0 (W4A16-like, default), q8_0, f16");
    cmd->add_option("--prompt-len", o->prompt_len, "prompt tokens to prefill")->required()->check(CLI::PositiveNumber);
    cmd->add_option("-n,--n-predict", o->n_generate, "tokens generated (decode is reported per token)")->check(CLI::PositiveNumber);
    cmd->add_option("--plan", o->plan, "solver | gpu | npu | cpu | layer | tensor | FILE.json (from hetero plan --json)");
    cmd->add_option("--units", o->units, "units of the profile to use, comma separated (default: all)");
    cmd->add_option("--chunk", o->chunk, "prefill chunk length (default: the NPU's default_chunk_tokens, else 256)")->check(CLI::PositiveNumber);
    cmd->add_option("--shapes", o->shapes, "token counts without a prepared NPU graph: compile (default), pad, cut");
    cmd->add_option("--trace", o->trace, "write a Chrome trace-event JSON of the simulated run");
    cmd->add_flag("--json", o->json, "print the results as JSON");
    cmd->callback([o] {
        if (o->model.empty() && o->shape.empty()) throw Error("simulate needs -m MODEL or --shape NAME");
        const SocProfile profile = load_soc_profile(o->profile);
        ModelFile model;
        std::string model_name;
        if (!o->shape.empty()) {
            model = shape_only_model(model_shape(o->shape), weight_type_from_name(o->wtype));
            model_name = fmt::format("{} ({}, shape only)", o->shape, o->wtype);
        } else {
            model = load_model(o->model);
            model_name = o->model;
        }
        const std::vector<DeviceRef> devices = soc_devices(profile, split_list(o->units));
        SocCostModel cost(profile, devices);
        int32_t chunk = o->chunk;
        if (chunk <= 0) {
            chunk = 256;
            for (const SocUnit& u : profile.units)
                if (u.has_npu) chunk = int32_t(u.npu.default_chunk_tokens.value);
        }
        SimPlanRequest pr;
        pr.kind = o->plan;
        pr.prompt_len = o->prompt_len;
        pr.n_generate = o->n_generate;
        pr.chunk = chunk;
        pr.n_ctx = o->prompt_len + o->n_generate + 1024;
        const Plan plan = make_sim_plan(model, devices, cost, pr);
        SimOptions so;
        so.prompt_len = o->prompt_len;
        so.n_generate = o->n_generate;
        so.chunk = chunk;
        so.n_ctx = pr.n_ctx;
        so.shapes = shape_policy(o->shapes);
        so.trace = !o->trace.empty();
        const SimResult r = simulate(model, plan, cost, so);
        if (!o->trace.empty()) {
            std::ofstream out(o->trace, std::ios::binary | std::ios::trunc);
            if (!out || !(out << r.trace_json) || !out.flush()) throw Error("cannot write trace file " + o->trace);
        }
        const double decode_ms = r.decode_seconds * 1e3;
        if (o->json) {
            nlohmann::json j;
            j["simulated"] = true;
            j["profile"] = profile.id;
            j["profile_path"] = profile.path;
            j["model"] = model_name;
            j["plan"] = o->plan;
            j["prompt_len"] = o->prompt_len;
            j["chunk"] = chunk;
            j["shapes"] = o->shapes;
            j["simulated_prefill_seconds"] = r.prefill_seconds;
            j["simulated_compile_seconds"] = r.compile_seconds;
            j["simulated_prefill_tok_s"] = o->prompt_len / r.prefill_seconds;
            j["simulated_decode_ms_per_token"] = decode_ms;
            j["simulated_decode_tok_s"] = 1e3 / decode_ms;
            nlohmann::json units = nlohmann::json::array();
            for (size_t d = 0; d < devices.size(); ++d)
                units.push_back({{"unit", r.prefill_units[d].label},
                                 {"simulated_prefill_busy_seconds", r.prefill_units[d].busy_seconds},
                                 {"simulated_prefill_gbs", r.prefill_units[d].achieved_gbs()},
                                 {"simulated_decode_busy_seconds", r.decode_units[d].busy_seconds},
                                 {"simulated_decode_gbs", r.decode_units[d].achieved_gbs()}});
            j["units"] = units;
            j["plan_json"] = nlohmann::json::parse(plan.to_json());
            fmt::print("{}\n", j.dump(2));
            return;
        }
        fmt::print("simulated run: profile {} ({}), model {}, plan {}, chunk {}, shapes {}\n", profile.id, profile.path, model_name, o->plan, chunk, o->shapes);
        fmt::print("{}\n", plan.describe());
        std::string chunks;
        for (int32_t c : r.chunks) chunks += (chunks.empty() ? "" : ", ") + std::to_string(c);
        fmt::print("simulated prefill: {} tokens in {:.1f} ms ({:.1f} tok/s), graph compile {:.1f} ms; chunks run: {}\n", o->prompt_len,
                   r.prefill_seconds * 1e3, o->prompt_len / r.prefill_seconds, r.compile_seconds * 1e3, chunks);
        fmt::print("simulated decode: {:.2f} ms/token ({:.2f} tok/s)\n", decode_ms, 1e3 / decode_ms);
        for (size_t d = 0; d < devices.size(); ++d)
            fmt::print("simulated {}: prefill busy {:.1f} ms at {:.1f} GB/s; decode busy {:.2f} ms at {:.1f} GB/s\n", r.prefill_units[d].label,
                       r.prefill_units[d].busy_seconds * 1e3, r.prefill_units[d].achieved_gbs(), r.decode_units[d].busy_seconds * 1e3,
                       r.decode_units[d].achieved_gbs());
    });
}

}  // namespace hetero::cli
