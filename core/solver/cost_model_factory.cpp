// Which cost model a run plans with: measured where a profile exists, the
// a-priori model elsewhere.
#include <hetero/solver/prior_cost_model.hpp>
#include <hetero/solver/profile.hpp>

namespace hetero {

namespace {

// A ProfiledCostModel that owns its fallback.
class ProfiledWithPrior final : public CostModel {
public:
    ProfiledWithPrior(const std::vector<DeviceRef>& devices, std::vector<std::optional<DeviceProfile>> profiles)
        : prior_(devices), profiled_(devices, std::move(profiles), &prior_) {}
    double node_seconds(size_t d, const OpShape& s) const override { return profiled_.node_seconds(d, s); }
    double launch_seconds(size_t d) const override { return profiled_.launch_seconds(d); }
    double execute_seconds(size_t d, int64_t n) const override { return profiled_.execute_seconds(d, n); }
    double transfer_seconds(size_t a, size_t b, uint64_t bytes) const override { return profiled_.transfer_seconds(a, b, bytes); }
    double compile_seconds(size_t d) const override { return profiled_.compile_seconds(d); }
    std::string source(size_t d) const override { return profiled_.source(d); }

private:
    PriorCostModel prior_;
    ProfiledCostModel profiled_;
};

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model) {
    std::vector<std::optional<DeviceProfile>> profiles;
    bool any = false;
    for (const DeviceRef& d : devices) {
        profiles.push_back(d.provider ? load_profile(d, model) : std::nullopt);
        any = any || profiles.back().has_value();
    }
    if (!any) return std::make_unique<PriorCostModel>(devices);
    return std::make_unique<ProfiledWithPrior>(devices, std::move(profiles));
}

}  // namespace hetero
