// Which cost model a run plans with.
#include <hetero/solver/prior_cost_model.hpp>
#include <hetero/solver/profile.hpp>

namespace hetero {

std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile&) {
    // Measured profiles (hetero profile) are not wired in yet: every device
    // is planned with the a-priori model.
    return std::make_unique<PriorCostModel>(devices);
}

}  // namespace hetero
