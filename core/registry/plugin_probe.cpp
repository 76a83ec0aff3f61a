#include "plugin_probe.hpp"

#include <hetero/log.hpp>
#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>
#include <hetero/sdk/hash.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace hetero::registry_detail {

namespace fs = std::filesystem;

namespace {

// What identifies the file as it is now, and the options it is created with.
std::string identity(const std::string& path, const std::map<std::string, std::string>& options) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "";
    std::ifstream in(path, std::ios::binary);
    uint64_t h = sdk::kFnvOffset;
    std::vector<char> buf(1 << 16);
    while (in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        h = sdk::fnv1a(buf.data(), size_t(in.gcount()), h);
    }
    for (const auto& [k, v] : options) {
        h = sdk::fnv1a(v, sdk::fnv1a(std::string_view("="), sdk::fnv1a(k, h)));
    }
    return fmt::format("{} {} {} {:016x}", path, uint64_t(st.st_size), int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, h);
}

std::string cache_dir() { return sdk::user_cache_dir("plugin-probes"); }

std::string probe_program() {
    boost::system::error_code ec;
    const boost::dll::fs::path self = boost::dll::this_line_location(ec);
    if (ec) return "";
    return (fs::path(self.string()).parent_path() / "hetero" / "hetero-plugin-probe").string();
}

std::string signal_text(int sig) {
    const char* d = strsignal(sig);
    return fmt::format("signal {} ({})", sig, d ? d : "?");
}

ProbeVerdict run_probe(const std::string& program, const std::string& path, const std::map<std::string, std::string>& options, double limit) {
    ProbeVerdict v;
    v.probed = true;
    int out[2];
    if (::pipe(out) != 0) return {true, false, ""};
    std::vector<std::string> args = {program, path};
    for (const auto& [k, val] : options) args.push_back(k + "=" + val);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int err = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (err != 0) {
        ::close(out[0]);
        return {true, false, ""};
    }
    std::string text;
    const auto t0 = std::chrono::steady_clock::now();
    bool timed_out = false;
    for (;;) {
        const double left = limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{out[0], POLLIN, 0};
        const int r = ::poll(&p, 1, int(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char buf[256];
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n <= 0) break;  // the probe closed its output: it is ending
        if (text.size() < 4096) text.append(buf, size_t(n));
    }
    ::close(out[0]);
    int status = 0;
    if (timed_out) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        v.safe = false;
        v.reason = fmt::format("did not finish loading within {:.0f} s (hangs in its initialiser or create?)", limit);
        return v;
    }
    // Output closed: the child is exiting; give its destructors the rest of the limit.
    while (true) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            v.safe = false;
            v.reason = fmt::format("did not exit within {:.0f} s after loading", limit);
            return v;
        }
        ::usleep(1000);
    }
    const bool loaded = text.find("ok\n") != std::string::npos;
    if (WIFSIGNALED(status)) {
        v.safe = false;
        v.reason = fmt::format("{} with {}", loaded ? "crashed while unloading" : "crashed while loading", signal_text(WTERMSIG(status)));
    } else if (!loaded) {
        v.safe = false;
        v.reason = fmt::format("ended the process while loading (exit status {})", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        v.safe = false;
        v.reason = fmt::format("ended the process while unloading (exit status {})", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return v;
}

}  // namespace

ProbeVerdict probe_plugin(const std::string& path, const std::map<std::string, std::string>& options) {
    if (const char* e = std::getenv("HETERO_PLUGIN_PROBE"); e && std::string(e) == "0") return {};
    const std::string program = probe_program();
    std::error_code ec;
    if (program.empty() || !fs::is_regular_file(program, ec)) {
        log(LogLevel::debug, fmt::format("no plugin probe at {}: plugins are loaded unprobed", program));
        return {};
    }
    const std::string id = identity(path, options);
    const std::string dir = cache_dir();
    const std::string record = dir.empty() || id.empty() ? "" : (fs::path(dir) / fmt::format("{:016x}", sdk::fnv1a(path))).string();
    if (!record.empty()) {
        std::ifstream in(record);
        std::string line, verdict, reason;
        if (std::getline(in, line) && line == id && std::getline(in, verdict) && (verdict == "safe" || verdict == "unsafe")) {
            std::getline(in, reason);
            return {verdict == "safe", true, reason};
        }
    }
    double limit = 20;
    if (const char* s = std::getenv("HETERO_PLUGIN_PROBE_SECONDS"); s && std::atof(s) > 0) limit = std::atof(s);
    const ProbeVerdict v = run_probe(program, path, options, limit);
    if (v.probed && !record.empty()) {
        fs::create_directories(dir, ec);
        // Written beside its name, then renamed: another process probing the
        // same plugin at the same time never reads half a verdict.
        const std::string text = id + "\n" + (v.safe ? "safe" : "unsafe") + "\n" + v.reason + "\n";
        if (std::string e = sdk::write_file_atomically(record, text); !e.empty())
            log(LogLevel::debug, "plugin probe verdict not cached: " + e);
    }
    return v;
}

}  // namespace hetero::registry_detail
