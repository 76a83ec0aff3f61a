// The text of a run executed again after a plugin crash (crash_report.hpp):
// the crashed process had already printed some of it (HETERO_RESTART_OUTPUT
// gives how much and its hash). The new run's text is held back until it is
// that long; when it is the same, only what follows is printed, so the
// output reads as one run. When it differs (sampling without a fixed seed,
// or providers that disagree), it is printed whole after a note.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace hetero::cli {

class RestartedOutput {
public:
    RestartedOutput();  // reads the environment
    // Prints `piece` to `out`, less what the crashed process printed already.
    void write(std::string_view piece, std::FILE* out);
    // The run ended: text still held back (the new run was shorter) is printed.
    void finish(std::FILE* out);

private:
    void release(std::FILE* out);
    uint64_t printed_ = 0;  // bytes the crashed process printed
    uint64_t hash_ = 0;     // their FNV-1a
    std::string held_;
    bool holding_ = false;
};

// main's argv, for executing the command again after a plugin crash.
void set_program_arguments(char** argv);
// For run, chat and serve: a plugin crash executes the command again
// without that plugin (hetero::restart_after_plugin_crash).
void restart_on_plugin_crash();

}  // namespace hetero::cli
