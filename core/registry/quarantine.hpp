// Plugins left out after crashing in the process (crash_report.hpp): the one
// that crashed in the process that executed this one, and those with a
// quarantine record (core/util/plugin_quarantine.hpp) for the file as it is.
#pragma once

#include <string>

namespace hetero::registry_detail {

// Why the plugin file `path` is left out, or "" to load it. With `retry`, its
// quarantine record is removed (the plugin is tried again); so is a record
// of another version of the file.
std::string crash_exclusion(const std::string& path, bool retry);

}  // namespace hetero::registry_detail
