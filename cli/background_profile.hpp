// run --profile auto: once the answer is printed, a detached `hetero profile`
// measures the devices the run's plan used that have no profile for this
// model, so that later runs plan with measured costs. It never delays the
// run: it starts after the text, in a session of its own, its output in a
// log file beside the profiles.
#pragma once

#include <hetero/engine/loaded_model.hpp>

#include <string>

namespace hetero::cli {

// Starts the background profile when one is owed; returns the line to tell
// the user ("" when every used device already has a profile).
std::string start_background_profile(const LoadedModel& model);

}  // namespace hetero::cli
