// The plans `hetero simulate` can run: the partition solver fed a SoC
// profile's cost model, one unit alone, layer-level or tensor-level GPU+NPU
// plans (HeteroLLM's Hetero-layer and Hetero-tensor), or a plan file.
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sim/soc_cost_model.hpp>

#include <string>
#include <vector>

namespace hetero::cli {

struct SimPlanRequest {
    std::string kind;  // solver | gpu | npu | cpu | layer | tensor | FILE.json
    int32_t prompt_len = 256, n_generate = 32, chunk = 256, n_ctx = 0;
};

// A plan over `devices`; throws hetero::Error for an unknown kind or a plan
// that needs a unit the devices lack.
Plan make_sim_plan(const ModelFile& model, const std::vector<DeviceRef>& devices, SocCostModel& cost, const SimPlanRequest& request);

// Reads a plan written by `hetero plan --json` (Plan::to_json), matching
// devices by label.
Plan plan_from_json_file(const std::string& path, const std::vector<DeviceRef>& devices, int n_layer);

}  // namespace hetero::cli
