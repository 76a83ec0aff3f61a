// The terminal's progress bar for long operations (hetero::ProgressReporter).
#pragma once

namespace hetero::cli {

// Installs the bar when stderr is a terminal; HETERO_PROGRESS=always installs
// it anyway and draws from the start (scripts, tests), =never not at all.
// Otherwise an operation gets a bar only once it has run for two seconds.
void install_progress_bar();

}  // namespace hetero::cli
