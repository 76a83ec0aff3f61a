#pragma once
#include <hetero/solver/cost_model.hpp>
#include <memory>
namespace hetero {
std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>&, const ModelFile&);
}
