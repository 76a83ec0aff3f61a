#include "child_process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string.h>  // strsignal (POSIX)
#include <stdexcept>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace hetero::conformance {
namespace {

// The running child, for the parent's SIGINT/SIGTERM handler: an interrupted
// run must not leave a plugin spinning in the background.
volatile sig_atomic_t g_child = 0;

void kill_child_and_die(int sig) {
    if (g_child > 0) ::kill(-pid_t(g_child), SIGKILL);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

[[noreturn]] void child_main(const std::function<int(RecordWriter&)>& body, int write_fd) {
    ::setpgid(0, 0);  // its own group: a timeout kills whatever the plugin started too
#if defined(__linux__)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and it dies with the parent (a test runner's kill)
#endif
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    RecordWriter writer(write_fd);
    int code = 2;
    try {
        code = body(writer);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetero-conformance: an exception escaped (from the plugin?): %s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // _exit: the plugin's static destructors and atexit handlers have no say in the verdict.
    ::_exit(code);
}

}  // namespace

std::string signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGABRT: return "SIGABRT";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGKILL: return "SIGKILL";
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        case SIGQUIT: return "SIGQUIT";
        case SIGTRAP: return "SIGTRAP";
        case SIGPIPE: return "SIGPIPE";
        case SIGALRM: return "SIGALRM";
        case SIGSYS: return "SIGSYS";
        case SIGXCPU: return "SIGXCPU";
        case SIGHUP: return "SIGHUP";
        case SIGUSR1: return "SIGUSR1";
        case SIGUSR2: return "SIGUSR2";
        default: return "signal " + std::to_string(sig);
    }
}

std::string ChildEnd::describe() const {
    switch (how) {
        case How::Exited: return "exited with status " + std::to_string(exit_code);
        case How::Signalled: return "was killed by " + signal_name(signal) + " (" + ::strsignal(signal) + ")";
        case How::TimedOut:
            return "made no progress for " + std::to_string(timeout_seconds) + " s and was killed (the limit is --timeout " +
                   std::to_string(timeout_seconds) + ")";
    }
    return "ended";
}

ChildEnd run_in_child(const std::function<int(RecordWriter&)>& body, int step_timeout_seconds,
                      const std::function<void(const Record&)>& on_record) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(stdout);  // nothing buffered may be printed twice
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::close(fds[0]);
        child_main(body, fds[1]);
    }
    ::close(fds[1]);
    ::setpgid(pid, pid);  // as the child does, so a kill right away reaches the group
    g_child = pid;
    auto* old_int = std::signal(SIGINT, kill_child_and_die);
    auto* old_term = std::signal(SIGTERM, kill_child_and_die);

    using Clock = std::chrono::steady_clock;
    auto deadline = Clock::now() + std::chrono::seconds(step_timeout_seconds);
    RecordReader reader;
    bool pipe_open = true, timed_out = false;
    int status = 0;
    bool reaped = false;
    while (!reaped) {
        if (pipe_open) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            pollfd p{fds[0], POLLIN, 0};
            // Short slices: a child that hands its pipe to a process it started
            // and exits is still seen to end.
            const int ready = ::poll(&p, 1, int(std::clamp<long long>(left, 0, 200)));
            if (ready > 0) {
                char buf[4096];
                const ssize_t n = ::read(fds[0], buf, sizeof buf);
                if (n > 0) {
                    reader.feed(buf, size_t(n));
                    Record r;
                    while (reader.next(r)) on_record(r);
                    deadline = Clock::now() + std::chrono::seconds(step_timeout_seconds);
                } else if (n == 0 || errno != EINTR) {
                    pipe_open = false;
                }
            }
        } else {
            ::usleep(20000);
        }
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = true;
        } else if (Clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            reaped = timed_out = true;
        }
    }
    // What the child wrote just before it ended.
    for (char buf[4096];;) {
        pollfd p{fds[0], POLLIN, 0};
        if (!pipe_open || ::poll(&p, 1, 0) <= 0) break;
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        reader.feed(buf, size_t(n));
    }
    Record r;
    while (reader.next(r)) on_record(r);
    ::close(fds[0]);
    ::kill(-pid, SIGKILL);  // anything the plugin left running in the group
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
    g_child = 0;

    ChildEnd end;
    end.timeout_seconds = step_timeout_seconds;
    if (timed_out) end.how = ChildEnd::How::TimedOut;
    else if (WIFSIGNALED(status)) end.how = ChildEnd::How::Signalled, end.signal = WTERMSIG(status);
    else end.exit_code = WEXITSTATUS(status);
    return end;
}

}  // namespace hetero::conformance
