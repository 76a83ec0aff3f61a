#include "crash_restart.hpp"

#include <hetero/crash_report.hpp>

#include <atomic>
#include <csignal>
#include <cstring>
#include <initializer_list>

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

namespace hetero {

namespace {

using crash_detail::say;

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGILL: return "SIGILL";
        case SIGFPE: return "SIGFPE";
        case SIGABRT: return "SIGABRT";
    }
    return "a fatal signal";
}

const char* signal_meaning(int sig) {
    switch (sig) {
        case SIGSEGV: return ", an invalid memory access";
        case SIGBUS: return ", a bad memory access";
        case SIGILL: return ", an illegal instruction";
        case SIGFPE: return ", an arithmetic fault";
        case SIGABRT: return ", it aborted";
    }
    return "";
}

// What each thread, and the process last, asked a plugin to do. A crash on
// a plugin's own worker thread finds no mark of its own: the latest call
// into the plugin is the best guess (its work was submitted there).
thread_local const char* t_call = nullptr;
std::atomic<const char*> g_last_call{nullptr};

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
        const char* call = t_call ? t_call : g_last_call.load(std::memory_order_relaxed);
        if (!call) call = "a call";
        // Text streamed to stdout ends without a newline: the report starts on a line of its own.
        if (crash_detail::output_written()) say("\n");
        say("hetero: the provider plugin ");
        say(info.dli_fname);
        say(" crashed (");
        say(signal_name(sig));
        say(signal_meaning(sig));
        say(") in ");
        say(call);
        const bool recorded = crash_detail::write_quarantine_record(info.dli_fname, signal_name(sig), call);
        if (recorded) say("; quarantined: later runs leave it out until the file changes (--retry-crashed tries it anyway)");
        if (crash_detail::restart_allowed(info.dli_fname)) {
            say("; running the command again without it\n");
            crash_detail::restart_without(info.dli_fname, signal_name(sig), call);
        } else {
            say(recorded ? "; report it to its maker\n"
                         : "; leave it out (--providers, or the config's providers list) and report it to its maker\n");
        }
        break;
    }
    std::raise(sig);  // SA_RESETHAND restored the default action
}

}  // namespace

PluginCall::PluginCall(const char* what) : previous_(t_call) {
    t_call = what;
    g_last_call.store(what, std::memory_order_relaxed);
}

PluginCall::~PluginCall() { t_call = previous_; }

void report_plugin_crashes() {
    void* warm[1];
    backtrace(warm, 1);  // loads the unwinder now, not inside the handler
    crash_detail::prepare_quarantine_dir();
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

void restart_after_plugin_crash(char** argv) { crash_detail::prepare_restart(argv); }

void note_output_written(const char* data, size_t n) { crash_detail::count_output(data, n); }

}  // namespace hetero
