// The cost model a run plans with for a model on these devices.
#pragma once

#include <hetero/solver/cost_model.hpp>

#include <memory>

namespace hetero {

std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model);

}  // namespace hetero
