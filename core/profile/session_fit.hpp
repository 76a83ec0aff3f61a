// The profiler's last step: the model run by a real session on the device
// alone, its executables timed against the tables (DeviceProfile::session_fit).
#pragma once

#include <hetero/profile/profile.hpp>

#include <functional>

namespace hetero {

// Token counts the fit measures (1 = decode), up to `cap` tokens per chunk.
std::vector<int64_t> session_fit_points(int64_t cap);

// Fills profile.session_fit from sessions at session_fit_points(); the
// profile's tables and layer_scale must be final. `progress` is called
// before each point. Throws hetero::Error when the session cannot run.
void fit_session(const DeviceRef& device, const ModelFile& model, DeviceProfile& profile, const ProfileOptions& options,
                 const std::function<void(int64_t n)>& progress);

}  // namespace hetero
