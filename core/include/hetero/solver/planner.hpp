// From a model, its devices and a cost model to a Plan: builds the solver's
// problem (per layer and device, the predicted seconds of each phase; per
// matmul, the seconds of any row share and its copies), applies the config's
// pins and forced splits, solves, and turns the answer into a Plan.
#pragma once

#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/solver/plan_constraints.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hetero {

struct PlanRequest {
    int32_t n_ctx = 0;
    int32_t prompt_len = 128;  // the prefill the plan is optimised for
    int32_t n_generate = 128;  // decode steps weighed against it
    int32_t max_batch = 512;   // prefill chunk size (SessionOptions::max_batch)
    // Sequences that decode together (a server's slots, SessionOptions::n_seq):
    // a decode step is costed with this many rows through every matmul and
    // this many attentions, and every layer's home holds this many KV caches.
    int32_t decode_batch = 1;
    CacheType cache_type = CacheType::automatic;
    // Whether one-off compile costs count: a run pays them once; a benchmark
    // measures the steady state after its warm-up.
    bool count_compile = true;
    PlanConstraints constraints;
};

Plan solve_plan(const ModelFile& model, const std::vector<DeviceRef>& devices, const CostModel& cost, const PlanRequest& request);

// What of `constraints` still applies on `devices` (after a device failed):
// pins to a device not among them are dropped, such devices are taken out of
// splits (with their ratios), and a split left with fewer than two devices is
// dropped.
PlanConstraints constraints_on(const PlanConstraints& constraints, const std::vector<DeviceRef>& devices);

}  // namespace hetero
