// What the tool's child process does once forked: load the plugin, then run
// the cases (or answer --model's questions), reporting each step as a record.
#pragma once

#include "conformance.hpp"
#include "model_needs.hpp"
#include "result_channel.hpp"
#include "tool_options.hpp"

#include <vector>

namespace hetero::conformance {

// Returns the child's exit status (0 after the Done record, 2 when the plugin refused to load).
int run_cases_child(const ToolOptions& options, const std::vector<Case>& cases, RecordWriter& out);
int model_coverage_child(const ToolOptions& options, const ModelNeeds& needs, RecordWriter& out);

}  // namespace hetero::conformance
