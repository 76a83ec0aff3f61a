// Runs a piece of the tool in a child process, so a plugin that exits,
// crashes or hangs cannot take the verdict with it: the parent reads the
// child's records as they come, kills it when a step runs past the time
// limit, and says how it ended. The child's stdout and stderr are the
// parent's own, so what the provider prints shows up live.
#pragma once

#include "result_channel.hpp"

#include <functional>
#include <string>

namespace hetero::conformance {

struct ChildEnd {
    enum class How { Exited, Signalled, TimedOut };
    How how = How::Exited;
    int exit_code = 0;  // Exited
    int signal = 0;     // Signalled
    int timeout_seconds = 0;
    // "exited with status 0", "was killed by SIGSEGV (Segmentation fault)",
    // "made no progress for 5 s and was killed (--timeout)".
    std::string describe() const;
};

// "SIGSEGV", "SIGABRT", ... or "signal N".
std::string signal_name(int sig);

// Forks; the child runs body(writer) and exits with its return value. The
// parent passes every record to on_record as it arrives and kills the child
// (its whole process group) once no record has come for step_timeout_seconds.
ChildEnd run_in_child(const std::function<int(RecordWriter&)>& body, int step_timeout_seconds,
                      const std::function<void(const Record&)>& on_record);

}  // namespace hetero::conformance
