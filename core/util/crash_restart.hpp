// The crash handler's work after naming the plugin (crash_report.cpp):
// writing the quarantine record and executing the command again. Everything
// called from the handler is async-signal-safe: static buffers, no
// allocation, no locks, only system calls POSIX lists as safe.
#pragma once

#include <cstddef>

namespace hetero::crash_detail {

// Writes `s` to stderr (signal-safe).
void say(const char* s);

// Set-up, outside any signal: where records go (the user cache dir, or none).
void prepare_quarantine_dir();
// Set-up: restarts on, with main's argv.
void prepare_restart(char** argv);

// Signal-safe. Records `plugin` (a path) as crashed with `signal` ("SIGSEGV")
// in `call` ("execute"): whether a record was written.
bool write_quarantine_record(const char* plugin, const char* signal, const char* call);
// Signal-safe. Whether prepare_restart ran and the chain of restarts allows
// one more for `plugin` (not already left out, under kMaxCrashRestarts).
bool restart_allowed(const char* plugin);
// Signal-safe. Executes the command again with `plugin` added to the ones
// left out; returns only when execve failed.
void restart_without(const char* plugin, const char* signal, const char* call);

// What the command wrote to stdout (note_output_written); whether it wrote any.
void count_output(const char* data, size_t n);
bool output_written();

}  // namespace hetero::crash_detail
