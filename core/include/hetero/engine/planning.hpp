// Planning a model on a runtime's devices: the solver fed with the cached
// profiles (or the a-priori cost model), the config's pins and splits, and
// the re-planner a ResilientSession asks after a device fails. One place for
// the rule, so every command and an embedding app plan alike.
#pragma once

#include <hetero/engine/runtime.hpp>
#include <hetero/model/model.hpp>
#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/resilient_session.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/solver/planner.hpp>

#include <memory>
#include <string>
#include <vector>

namespace hetero {

// A provider the plan leaves out, and why (its prediction alone, or why it
// cannot run the model).
struct UnusedProvider {
    std::string provider, reason;
};

// `cost` stays valid for traces' predicted times.
struct PlannedRun {
    std::unique_ptr<CostModel> cost;
    Plan plan;
    // Set by plan_model when the config or --providers names the providers:
    // each named one none of whose devices the plan uses.
    std::vector<UnusedProvider> unused;
    // Calibration probes this planning ran, and devices it left uncalibrated
    // for a reason a user can act on (calibration.hpp), one line each.
    std::vector<std::string> notes;
};

// The plan request matching a session's options (context, chunk, cache type).
PlanRequest plan_request(const SessionOptions& so, int32_t n_ctx, int32_t prompt_len, int32_t n_generate);

// The solver's plan for `model` on the devices of `devices` that can run it,
// with `constraints` (pins and splits) applied.
PlannedRun plan_on_devices(const std::vector<DeviceRef>& devices, const PlanConstraints& constraints, const ModelFile& model,
                           PlanRequest request);
// The same on the runtime's devices with its config's constraints (and,
// where the providers are named, why a named one is left out).
PlannedRun plan_model(const Runtime& rt, const ModelFile& model, const PlanRequest& request);

// One device alone, as the solver would cost it for the same request: the
// alternative a user compares the chosen plan with.
struct Candidate {
    std::string device;  // "opencl:0"
    bool chosen = false;  // the plan is this device alone
    double prefill_seconds = -1, decode_seconds = -1;  // predicted; < 0 when it cannot run the model alone
    double compile_seconds = 0;  // one-off builds the request counts
    double objective = -1;       // prefill + n_generate x decode + builds, as the solver weighs them
    std::string why_not;         // when it cannot run the model alone
};
// Every device of run.plan.devices alone, in their order (at most one per
// device, pinned as `config.plan` pins would be ignored).
std::vector<Candidate> single_device_candidates(const PlannedRun& run, const ModelFile& model, const PlanRequest& request);
// "chosen opencl:0: predicted 3.10 ms a token against vulkan:0's 5.64 ...",
// one table row per candidate, for `hetero plan` and `run -v`.
std::string describe_candidates(const std::vector<Candidate>& candidates, const PlannedRun& run, const PlanRequest& request);

// Devices a profile is worth measuring on for this request: not one whose
// prediction alone (the calibrated prior) is over kHopelessFactor times the
// best device's at both prefill and decode (the CPU beside an H100): the
// plan could not use it, and profiling a 7B on 16 host cores took minutes.
// Devices that cannot run the model alone are kept (they may take matmul
// shares). `skipped` gets one line per device left out, saying why.
inline constexpr double kHopelessFactor = 4.0;
std::vector<bool> worth_profiling(const PlannedRun& run, const ModelFile& model, const PlanRequest& request,
                                  std::vector<std::string>* skipped);

// Plans again on the devices left after a failure, keeping the config's pins
// and splits that still apply. `rt` and `model` must outlive the replanner.
Replanner replanner_for(const Runtime& rt, const ModelFile& model, const PlanRequest& request);

// HETERO_SYNC=block makes devices wait for each other on a condition
// variable instead of sleeping for the predicted time and polling.
SyncMode sync_mode_from_env();

}  // namespace hetero
