// The conformance tool's command line.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hetero::conformance {

struct ToolOptions {
    std::string plugin;
    long device = -1;  // -1: every device
    std::string filter;
    std::string exclude;  // cases whose name holds it are left out
    std::vector<std::pair<std::string, std::string>> provider_options;  // --option key=value
    bool list = false;
    bool verbose = false;
    std::string junit_path;
    std::string model_path;
    int timeout_seconds = 600;  // the longest one step (loading, one case) may take
    bool help = false;
};

extern const char* const kUsage;

// Fills `out`; returns "" or what is wrong with the command line.
std::string parse_command_line(int argc, char** argv, ToolOptions& out);

}  // namespace hetero::conformance
