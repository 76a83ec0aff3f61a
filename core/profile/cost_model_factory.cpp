// Which cost model a run plans with: measured where a profile exists, the
// a-priori model corrected by a calibration probe elsewhere, the bare prior
// where neither is.
#include <hetero/profile/calibration.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <algorithm>

namespace hetero {

namespace {

// A ProfiledCostModel that owns its fallback. A device without a profile
// that runs on the same silicon as a profiled one (PoCL's CPU device beside
// the CPU provider) has its a-priori figures corrected by what the profile
// found there: prior(d) x measured(r) / prior(r) for the same op. Without
// that, an optimistic roofline on one side and a measurement on the other
// make the solver hand work to a device that only slows the shared cores.
class ProfiledWithPrior final : public CostModel {
public:
    ProfiledWithPrior(const std::vector<DeviceRef>& devices, std::vector<std::optional<DeviceProfile>> profiles,
                      std::unique_ptr<CostModel> prior)
        : reference_(devices.size(), -1), prior_(std::move(prior)), profiled_(devices, profiles, prior_.get()) {
        const std::vector<int> resource = resource_ids(devices);
        for (size_t d = 0; d < devices.size(); ++d)
            for (size_t r = 0; r < devices.size() && !profiles[d]; ++r)
                if (profiles[r] && resource[r] == resource[d]) {
                    reference_[d] = long(r);
                    break;
                }
    }
    double node_seconds(size_t d, const OpShape& s) const override {
        const double own = profiled_.node_seconds(d, s);
        if (reference_[d] < 0 || own < 0) return own;
        const size_t r = size_t(reference_[d]);
        const double measured = profiled_.node_seconds(r, s), prior = prior_->node_seconds(r, s);
        return measured > 0 && prior > 0 ? own * std::max(1.0, measured / prior) : own;
    }
    double launch_seconds(size_t d) const override { return profiled_.launch_seconds(d); }
    double execute_seconds(size_t d, int64_t n) const override { return profiled_.execute_seconds(d, n); }
    double transfer_seconds(size_t a, size_t b, uint64_t bytes) const override { return profiled_.transfer_seconds(a, b, bytes); }
    double compile_seconds(size_t d) const override { return profiled_.compile_seconds(d); }
    std::string source(size_t d) const override { return profiled_.source(d); }

private:
    std::vector<long> reference_;  // per device: a profiled device on its silicon, or -1
    std::unique_ptr<CostModel> prior_;  // the fallback of profiled_
    ProfiledCostModel profiled_;
};

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model, CalibrationPolicy policy,
                                           std::vector<std::string>* notes) {
    std::vector<std::optional<DeviceProfile>> profiles;
    std::vector<bool> profiled;
    bool any = false;
    for (const DeviceRef& d : devices) {
        profiles.push_back(d.provider ? load_profile(d, model) : std::nullopt);
        profiled.push_back(profiles.back().has_value());
        any = any || profiles.back().has_value();
    }
    std::unique_ptr<CostModel> prior = make_calibrated_prior(devices, calibrations_for(devices, model, profiled, policy, notes));
    if (!any) return prior;
    return std::make_unique<ProfiledWithPrior>(devices, std::move(profiles), std::move(prior));
}

std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model) {
    return make_cost_model(devices, model, calibration_policy_from_env(), nullptr);
}

}  // namespace hetero
