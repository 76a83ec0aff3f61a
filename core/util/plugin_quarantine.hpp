// What the crash handler leaves for the next process, and what the registry
// reads back (core/registry/quarantine.cpp).
//
// A quarantine record: a file <user cache dir>/plugin-quarantine/<16 hex
// digits of FNV-1a of the plugin path>, lines of key=value:
//   path=<plugin file as loaded>  size=<bytes>  mtime_ns=<ns>
//   signal=SIGSEGV  call=execute  time=<unix seconds of the crash>
// The file identity (path, size, mtime) is the probe cache's: a rebuilt or
// replaced plugin no longer matches and is tried again.
//
// The restart environment: HETERO_CRASHED_PLUGINS holds one line per plugin
// that crashed in this chain of restarts, "<signal> <call> <path>" (the
// call's spaces as '_'); HETERO_RESTART_OUTPUT "<bytes> <fnv1a hex>" of what
// the crashed process had written to stdout.
#pragma once

namespace hetero::crash_detail {

inline constexpr const char* kQuarantineSubdir = "plugin-quarantine";
inline constexpr const char* kCrashedPluginsEnv = "HETERO_CRASHED_PLUGINS";
inline constexpr const char* kRestartOutputEnv = "HETERO_RESTART_OUTPUT";

}  // namespace hetero::crash_detail
