// The profiler's last step: the model run by a real session on the device
// alone, its executables timed against the tables (DeviceProfile::session_fit).
#pragma once

#include <hetero/profile/profile.hpp>

#include <functional>

namespace hetero {

// Token counts the fit measures (1 = decode), up to `cap` tokens per chunk.
std::vector<int64_t> session_fit_points(int64_t cap);

struct SessionFitOptions {
    int32_t n_ctx = 0;       // the session's context (0: the model's)
    int32_t max_tokens = 0;  // largest chunk measured
    std::vector<int64_t> points;  // token counts, ascending (empty: session_fit_points(max_tokens))
    // A prefill point whose one forward is predicted to take longer than this
    // is not measured, nor any after it (the fit keeps the largest point's
    // values beyond it).
    double max_forward_seconds = 1.0;
    double target_seconds = 0.3;  // per point, as ProfileOptions
    int min_runs = 3, max_runs = 20;
};

// The model run by a session on `device` alone, its executables timed
// against what `cost` predicts for their nodes: one SessionFitPoint per
// point measured. `launch_seconds` is the device's measured or assumed cost
// of an empty execute. Throws hetero::Error when the session cannot run.
std::vector<SessionFitPoint> measure_session_fit(const DeviceRef& device, const ModelFile& model, const CostModel& cost,
                                                double launch_seconds, const SessionFitOptions& options,
                                                const std::function<void(int64_t n)>& progress);

// Fills profile.session_fit from sessions at session_fit_points(); the
// profile's tables and layer_scale must be final. Points up to `kept_up_to`
// keep the fits the profile already holds (a profile being extended: its
// tables there are unchanged); only the others are measured. `progress` is
// called before each point measured. Throws hetero::Error when the session
// cannot run.
void fit_session(const DeviceRef& device, const ModelFile& model, DeviceProfile& profile, const ProfileOptions& options,
                 const std::function<void(int64_t n)>& progress, int64_t kept_up_to = 0);

}  // namespace hetero
