// A discrete-event simulation of a Plan on a SoC profile: it simulates the
// schedule the session runs (make_schedule, hetero/schedule/schedule.hpp:
// runs of nodes per device, one task per row share of a split matmul plus a
// merge on the layer's home, the head as its own task); each device runs its
// tasks in order; a task starts when the tasks it reads from have finished
// (plus memory.sync_us when they ran on another unit); a task costs its
// unit's launch, then per node a compute part and bytes streamed. While
// several units stream at once, each gets at most its own bandwidth and a
// max-min fair share of memory.combined_gbs, and time advances piecewise as
// the set of streaming units changes. Every figure it produces is simulated.
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sim/soc_cost_model.hpp>

#include <string>
#include <vector>

namespace hetero {

// How a prefill chunk whose token count has no prepared graph on a
// static-shape unit (the NPU) is run.
enum class ShapePolicy {
    compile,  // compile a graph for it (HeteroLLM's "Online-prepare"); its time counts
    pad,      // pad the chunk to the next prepared count (all units compute the padding)
    cut,      // the largest prepared count runs on the plan, the remainder without the static-shape units
};

struct SimOptions {
    int32_t prompt_len = 256;
    int32_t n_generate = 32;
    int32_t chunk = 256;  // prefill chunk length
    int32_t n_ctx = 0;    // 0: prompt_len + n_generate
    ShapePolicy shapes = ShapePolicy::compile;
    bool trace = false;
};

struct SimUnitStats {
    std::string label;
    double busy_seconds = 0;  // time with a task running
    double bytes = 0;         // bytes streamed from DRAM
    double achieved_gbs() const { return busy_seconds > 0 ? bytes / busy_seconds / 1e9 : 0; }
};

struct SimResult {
    double prefill_seconds = 0;  // compile included
    double compile_seconds = 0;  // graph compiles inside the prefill
    double decode_seconds = 0;   // one decode step (at the mean context of the generated tokens)
    std::vector<SimUnitStats> prefill_units, decode_units;
    std::vector<int32_t> chunks;  // token counts the prefill ran (after padding or cutting)
    std::string trace_json;       // Chrome trace-event JSON when SimOptions::trace
};

SimResult simulate(const ModelFile& model, const Plan& plan, const SocCostModel& cost, const SimOptions& options);

// Independent pieces of work, one queue per device, run by the same event
// engine (no launch cost): returns each job's finish time in seconds. For
// checking the contention model by hand.
struct SimJob {
    size_t device = 0;
    double compute_seconds = 0, bytes = 0;
};
std::vector<double> simulate_jobs(const Plan& plan, const SocCostModel& cost, const std::vector<SimJob>& jobs);

// `plan` with every matmul share on a device of `unit_kind` moved to its
// layer's home (used for the remainder of a sequence cut).
Plan plan_without_kind(const Plan& plan, uint32_t unit_kind);

}  // namespace hetero
