// The a-priori cost model: what a first run plans with before any profile
// exists. Node times come from the provider's op_supported estimate where it
// gives one, else from a roofline over hetero_device_props (peak FLOP/s and
// bandwidth, with documented defaults where a provider reports 0).
#pragma once

#include <hetero/solver/cost_model.hpp>

#include <map>
#include <mutex>

namespace hetero {

class PriorCostModel : public CostModel {
public:
    explicit PriorCostModel(std::vector<DeviceRef> devices);
    double node_seconds(size_t device, const OpShape& shape) const override;
    double launch_seconds(size_t device) const override;
    double transfer_seconds(size_t from, size_t to, uint64_t bytes) const override;
    double compile_seconds(size_t device) const override;
    std::string source(size_t device) const override;

private:
    double roofline(size_t device, const OpShape& s) const;
    std::vector<DeviceRef> devices_;
    std::vector<int> resources_;
    mutable std::mutex mu_;
    mutable std::map<std::tuple<size_t, std::string, int64_t, int64_t, int64_t>, double> cache_;
};

}  // namespace hetero
