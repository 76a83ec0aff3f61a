// TEMPORARY (removed when the solver, prior cost model and profiler land).
#include <hetero/error.hpp>
#include <hetero/solver/cost_model.hpp>
#include <hetero/solver/solver.hpp>
namespace hetero {
const char* phase_name(int p) { return p == kPrefill ? "prefill" : "decode"; }
SolverResult solve(const SolverProblem&) { throw Error("solver pending"); }
std::vector<int> resource_ids(const std::vector<DeviceRef>& d) { return std::vector<int>(d.size(), 0); }
}
#include <hetero/solver/profile.hpp>
namespace hetero {
std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>&, const ModelFile&) { throw Error("cost model pending"); }
}
