// Temporary files that a fatal signal must not leave behind. A process that
// writes `<target>.tmp.<pid>.<n>` (atomic_file.hpp) and is ended by SIGINT or
// SIGTERM would otherwise leave the partial file beside the target. Paths
// are kept in a fixed table that a signal handler can walk: it unlinks
// them, then lets the signal end the process as it would have.
//
// Installing the handler is the program's choice (the hetero CLI does it at
// start-up): remove_temp_files_on_signal(). Where a program has its own
// handler for the signal (Ctrl-C stopping a generation), that handler runs
// instead and the files are left to the writer, which finishes or removes
// them itself.
#pragma once

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <string>

#include <signal.h>
#include <unistd.h>

namespace hetero::sdk {

namespace temp_files_detail {

inline constexpr int kSlots = 64;
inline constexpr size_t kPathBytes = 4096;

// state: 0 free, 1 being filled, 2 holds a path to remove on a signal.
struct Slot {
    std::atomic<int> state{0};
    char path[kPathBytes] = {};
};

// Constant-initialised: nothing for the handler to construct.
inline Slot g_slots[kSlots];
inline constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
inline struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];

// Async-signal-safe: atomics, unlink, sigaction and raise only.
inline void on_fatal_signal(int sig) {
    const int saved_errno = errno;
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
    for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
        if (kSignals[i] != sig) continue;
        // Back to what was there before (the default: the process ends), and
        // the signal again; it is blocked until this handler returns.
        ::sigaction(sig, &g_previous[i], nullptr);
        ::raise(sig);
    }
    errno = saved_errno;
}

}  // namespace temp_files_detail

// Adds `path` to the table; returns its slot, or -1 when the table is full
// or the path too long (the file is then not removed on a signal).
inline int register_temp_file(const std::string& path) {
    using namespace temp_files_detail;
    if (path.size() >= kPathBytes) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;
        if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].state.store(2, std::memory_order_release);
        return i;
    }
    return -1;
}

// Removes slot `slot` (from register_temp_file) from the table; -1 is ignored.
inline void unregister_temp_file(int slot) {
    if (slot >= 0 && slot < temp_files_detail::kSlots) temp_files_detail::g_slots[slot].state.store(0, std::memory_order_release);
}

// Registers a path for its lifetime.
class TempFileGuard {
public:
    explicit TempFileGuard(const std::string& path) : slot_(register_temp_file(path)) {}
    ~TempFileGuard() { unregister_temp_file(slot_); }
    TempFileGuard(const TempFileGuard&) = delete;
    TempFileGuard& operator=(const TempFileGuard&) = delete;

private:
    int slot_;
};

// Installs the handler for SIGINT, SIGTERM and SIGHUP where their
// disposition is the default (a signal the program ignores or handles
// itself is left alone). Call once, early, from the main thread.
inline void remove_temp_files_on_signal() {
    using namespace temp_files_detail;
    for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
        struct sigaction current {};
        if (::sigaction(kSignals[i], nullptr, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) continue;
        g_previous[i] = current;
        struct sigaction sa {};
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(kSignals[i], &sa, nullptr);
    }
}

}  // namespace hetero::sdk
