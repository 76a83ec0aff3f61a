#include <hetero/engine/planning.hpp>

#include <hetero/error.hpp>
#include <hetero/profile/calibration.hpp>
#include <hetero/profile/profile.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <set>
#include <string>

namespace hetero {

PlanRequest plan_request(const SessionOptions& so, int32_t n_ctx, int32_t prompt_len, int32_t n_generate) {
    PlanRequest req;
    req.n_ctx = n_ctx;
    req.prompt_len = prompt_len;
    req.n_generate = n_generate;
    req.max_batch = so.max_batch;
    req.cache_type = so.cache_type;
    req.decode_batch = so.n_seq;
    return req;
}

PlannedRun plan_on_devices(const std::vector<DeviceRef>& all, const PlanConstraints& constraints, const ModelFile& model,
                           PlanRequest request) {
    PlannedRun r;
    const std::vector<DeviceRef> devices = devices_for_model(model, all, request.n_ctx);
    r.cost = make_cost_model(devices, model, calibration_policy_from_env(), &r.notes);
    request.constraints = constraints;
    r.plan = solve_plan(model, devices, *r.cost, request);
    return r;
}

namespace {

std::string provider_of(const DeviceRef& d) { return d.provider ? d.provider->name() : d.label(); }

// Why `d` cannot run a whole layer of `model` (its first refused node
// outside the matmuls), or "" when it can.
std::string layer_refusal(const DeviceRef& d, const ModelFile& model, int32_t n_ctx) {
    const uint32_t cache = cache_dtype(CacheType::automatic, d.props);
    const ModelGraph g = build_model_graph(model, 1, n_ctx, std::vector<uint32_t>(size_t(model.hparams.n_layer), cache));
    for (size_t i = 0; i < g.nodes.size(); ++i)
        if ((g.nodes[i].layer == 0 || g.nodes[i].layer == g.n_layer) && !is_matmul_role(g.nodes[i].role))
            if (std::string why = unsupported_reason(d, g, i); !why.empty()) return why;
    return "";
}

// Why `provider` has no device in run.plan: the whole model pinned to its
// first device that can run it, predicted with the same cost model, against
// the plan; or why it cannot run the model.
std::string why_unused(const std::string& provider, const PlannedRun& run, const ModelFile& model, const PlanRequest& request) {
    const DeviceRef* own = nullptr;
    for (const DeviceRef& d : run.plan.devices)
        if (provider_of(d) == provider) {
            own = &d;
            break;
        }
    if (!own) return "none of its devices can run this model (see the warning above)";
    auto per_token = [](const Plan& p) {
        const double s = p.predicted_seconds[kDecode];
        return fmt::format("{:.3f} ms per token ({:.0f} tok/s), prefill {:.1f} ms", s * 1e3, s > 0 ? 1.0 / s : 0.0, p.predicted_seconds[kPrefill] * 1e3);
    };
    PlanRequest alone = request;
    alone.constraints = {};
    alone.constraints.pins.push_back(PlanConstraints::Pin{0, -1, std::nullopt, own->label()});
    try {
        const Plan p = solve_plan(model, run.plan.devices, *run.cost, alone);
        return fmt::format("predicted {} on {} alone, against {} for the plan", per_token(p), own->label(), per_token(run.plan));
    } catch (const Error& e) {
        if (const std::string why = layer_refusal(*own, model, request.n_ctx); !why.empty())
            return fmt::format("it runs only this model's matmuls ({}), and handing it any is not predicted faster", why);
        return fmt::format("it cannot run the model alone: {}", e.what());
    }
}

}  // namespace

std::vector<Candidate> single_device_candidates(const PlannedRun& run, const ModelFile& model, const PlanRequest& request) {
    std::vector<Candidate> out;
    const std::vector<size_t> used = run.plan.used_devices();
    for (size_t d = 0; d < run.plan.devices.size(); ++d) {
        Candidate c;
        c.device = run.plan.devices[d].label();
        c.chosen = used.size() == 1 && used[0] == d;
        PlanRequest alone = request;
        alone.constraints = {};
        alone.constraints.pins.push_back(PlanConstraints::Pin{0, -1, std::nullopt, c.device});
        try {
            const Plan p = solve_plan(model, run.plan.devices, *run.cost, alone);
            c.prefill_seconds = p.predicted_seconds[kPrefill];
            c.decode_seconds = p.predicted_seconds[kDecode];
            c.compile_seconds = request.count_compile ? run.cost->compile_seconds(d) : 0.0;
            c.objective = c.prefill_seconds + double(request.n_generate) * c.decode_seconds + c.compile_seconds;
        } catch (const Error& e) {
            c.why_not = e.what();
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::string describe_candidates(const std::vector<Candidate>& candidates, const PlannedRun& run, const PlanRequest& request) {
    std::string out = fmt::format("each device alone, for a {}-token prompt and {} tokens generated (objective: prefill + {} x decode{}):\n",
                                  request.prompt_len, request.n_generate, request.n_generate,
                                  request.count_compile ? " + one-off builds" : "");
    for (const Candidate& c : candidates) {
        if (c.objective < 0) {
            out += fmt::format("  {:<10} cannot run the model alone: {}\n", c.device, c.why_not);
            continue;
        }
        out += fmt::format("  {:<10} prefill {:8.2f} ms  decode {:7.3f} ms/token ({:6.0f} tok/s)  builds {:5.1f} s  objective {:8.3f} s{}\n", c.device,
                           c.prefill_seconds * 1e3, c.decode_seconds * 1e3, c.decode_seconds > 0 ? 1.0 / c.decode_seconds : 0.0, c.compile_seconds,
                           c.objective, c.chosen ? "  <- chosen" : "");
    }
    const auto used = run.plan.used_devices();
    if (used.size() > 1) {
        const double objective = run.plan.predicted_seconds[kPrefill] + double(request.n_generate) * run.plan.predicted_seconds[kDecode];
        out += fmt::format("  chosen: a plan over {} devices, prefill {:.2f} ms, decode {:.3f} ms/token, objective {:.3f} s before builds\n",
                           used.size(), run.plan.predicted_seconds[kPrefill] * 1e3, run.plan.predicted_seconds[kDecode] * 1e3, objective);
    }
    return out;
}

std::vector<bool> worth_profiling(const PlannedRun& run, const ModelFile& model, const PlanRequest& request,
                                  std::vector<std::string>* skipped) {
    const std::vector<Candidate> c = single_device_candidates(run, model, request);
    double best_prefill = -1, best_decode = -1;
    for (const Candidate& x : c) {
        if (x.objective < 0) continue;
        if (best_prefill < 0 || x.prefill_seconds < best_prefill) best_prefill = x.prefill_seconds;
        if (best_decode < 0 || x.decode_seconds < best_decode) best_decode = x.decode_seconds;
    }
    std::vector<bool> out(c.size(), true);
    for (size_t d = 0; d < c.size(); ++d) {
        const Candidate& x = c[d];
        if (x.objective < 0 || best_prefill <= 0 || best_decode <= 0) continue;
        const double prefill_x = x.prefill_seconds / best_prefill, decode_x = x.decode_seconds / best_decode;
        if (prefill_x <= kHopelessFactor || decode_x <= kHopelessFactor) continue;
        out[d] = false;
        if (skipped)
            skipped->push_back(fmt::format("{} not profiled: predicted {:.0f}x the best device's prefill and {:.0f}x its decode, so no plan "
                                           "would use it ({})",
                                           x.device, prefill_x, decode_x, run.cost->source(d)));
    }
    return out;
}

PlannedRun plan_model(const Runtime& rt, const ModelFile& model, const PlanRequest& request) {
    PlannedRun run = plan_on_devices(rt.devices, rt.config.plan, model, request);
    if (rt.config.providers.empty()) return run;  // nothing named: all found are offered, no note owed
    std::set<std::string> used, asked;
    for (size_t d : run.plan.used_devices()) used.insert(provider_of(run.plan.devices[d]));
    for (const DeviceRef& d : rt.devices) {
        const std::string p = provider_of(d);
        if (used.count(p) || !asked.insert(p).second) continue;
        run.unused.push_back({p, why_unused(p, run, model, request)});
    }
    return run;
}

Replanner replanner_for(const Runtime& rt, const ModelFile& model, const PlanRequest& request) {
    return [&rt, &model, request](const std::vector<DeviceRef>& left) {
        PlannedRun p = plan_on_devices(left, constraints_on(rt.config.plan, left), model, request);
        return Replanned{std::move(p.plan), std::move(p.cost)};
    };
}

SyncMode sync_mode_from_env() {
    const char* e = std::getenv("HETERO_SYNC");
    return e && std::string(e) == "block" ? SyncMode::block : SyncMode::predicted_poll;
}

}  // namespace hetero
