#include <hetero/engine/planning.hpp>

#include <hetero/profile/profile.hpp>

#include <cstdlib>
#include <string>

namespace hetero {

PlanRequest plan_request(const SessionOptions& so, int32_t n_ctx, int32_t prompt_len, int32_t n_generate) {
    PlanRequest req;
    req.n_ctx = n_ctx;
    req.prompt_len = prompt_len;
    req.n_generate = n_generate;
    req.max_batch = so.max_batch;
    req.cache_type = so.cache_type;
    return req;
}

PlannedRun plan_on_devices(const std::vector<DeviceRef>& all, const PlanConstraints& constraints, const ModelFile& model,
                           PlanRequest request) {
    PlannedRun r;
    const std::vector<DeviceRef> devices = devices_for_model(model, all, request.n_ctx);
    r.cost = make_cost_model(devices, model);
    request.constraints = constraints;
    r.plan = solve_plan(model, devices, *r.cost, request);
    return r;
}

PlannedRun plan_model(const Runtime& rt, const ModelFile& model, const PlanRequest& request) {
    return plan_on_devices(rt.devices, rt.config.plan, model, request);
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
