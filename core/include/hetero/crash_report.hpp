// Naming the plugin a crash came from, and surviving it. A provider that
// segfaults inside execute or compile takes the process with it (its code
// runs in the process), but the user should learn which plugin it was
// instead of a bare "Segmentation fault". The handler walks the crashed
// thread's stack for a frame inside a libhetero-ep-*.so, prints that file
// and the signal, and records the file in a quarantine record under the
// user cache dir (later runs leave it out until the file changes; see
// docs/providers.md). A command that enabled restarts is then executed
// again with the plugin left out (HETERO_CRASHED_PLUGINS tells the new
// process which and why); otherwise the signal ends the process as it
// would have.
//
// Installing signal handlers is the program's choice: the hetero CLI does it
// at start-up; an app embedding libhetero may call it or keep its own.
#pragma once

#include <cstddef>

namespace hetero {

// Handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (one-shot: the
// default action is restored before the signal is raised again).
void report_plugin_crashes();

// After a plugin crash, execute this program again with the same arguments
// instead of dying, with every plugin that crashed so far left out; at most
// kMaxCrashRestarts times in a row. `argv` must outlive the process (main's).
inline constexpr int kMaxCrashRestarts = 2;
void restart_after_plugin_crash(char** argv);

// Bytes the command has written to stdout so far (counted and hashed): a
// restarted run is told them (HETERO_RESTART_OUTPUT) so that it does not
// print them twice. Not thread-safe; one writer.
void note_output_written(const char* data, size_t n);

// Marks what the thread is asking a plugin to do, for the crash report and
// the quarantine record ("execute", "compile", "a device query").
class PluginCall {
public:
    explicit PluginCall(const char* what);
    ~PluginCall();
    PluginCall(const PluginCall&) = delete;
    PluginCall& operator=(const PluginCall&) = delete;

private:
    const char* previous_;
};

}  // namespace hetero
