#include <hetero/crash_report.hpp>

#include <csignal>
#include <initializer_list>
#include <cstring>

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

namespace hetero {

namespace {

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV, an invalid memory access";
        case SIGBUS: return "SIGBUS, a bad memory access";
        case SIGILL: return "SIGILL, an illegal instruction";
        case SIGFPE: return "SIGFPE, an arithmetic fault";
        case SIGABRT: return "SIGABRT, it aborted";
    }
    return "a fatal signal";
}

void say(const char* s) {
    for (size_t n = std::strlen(s); n > 0;) {
        const ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= size_t(w);
    }
}

// Only what a crashed process can still do: no allocation, no locks of ours.
// backtrace() and dladdr() are not on POSIX's async-signal-safe list but are
// what crash reporters use; libgcc's unwinder is loaded before any crash.
void on_crash(int sig, siginfo_t*, void*) {
    void* frames[64];
    const int n = backtrace(frames, 64);
    for (int i = 0; i < n; ++i) {
        Dl_info info;
        if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
        const char* slash = std::strrchr(info.dli_fname, '/');
        const char* base = slash ? slash + 1 : info.dli_fname;
        if (std::strncmp(base, "libhetero-ep-", 13) != 0) continue;
        say("hetero: the provider plugin ");
        say(info.dli_fname);
        say(" crashed (");
        say(signal_name(sig));
        say("); leave it out (--providers, or the config's providers list) and report it to its maker\n");
        break;
    }
    std::raise(sig);  // SA_RESETHAND restored the default action
}

}  // namespace

void report_plugin_crashes() {
    void* warm[1];
    backtrace(warm, 1);  // loads the unwinder now, not inside the handler
    // A stack overflow in a plugin leaves no stack to run the handler on.
    static char alt_stack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(s, &sa, nullptr);
}

}  // namespace hetero
