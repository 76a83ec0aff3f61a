#include "background_profile.hpp"

#include <hetero/profile/profile.hpp>
#include <hetero/sdk/hash.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

extern char** environ;

namespace hetero::cli {

namespace {

namespace fs = std::filesystem;

// One background profile per model at a time: a lock file holding the
// profiler's pid, stale once that process is gone.
bool take_lock(const std::string& lock, pid_t& holder) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
        if (errno != EEXIST) return false;
        std::ifstream in(lock);
        long pid = 0;
        in >> pid;
        if (pid > 0 && ::kill(pid_t(pid), 0) == 0) {
            holder = pid_t(pid);
            return false;
        }
        fs::remove(lock);  // its profiler has ended
    }
    return false;
}

std::string self_path() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    buf[n] = '\0';
    return buf;
}

}  // namespace

std::string start_background_profile(const LoadedModel& model) {
    const Plan& plan = model.initial_plan();
    std::set<std::string> providers;
    std::string devices;
    for (size_t d : plan.used_devices()) {
        const DeviceRef& dev = plan.devices[d];
        if (!dev.provider || (dev.props.flags & HETERO_DEVICE_FLAG_SIMULATED_TIME) || load_profile(dev, model.file())) continue;
        providers.insert(dev.provider->name());
        devices += (devices.empty() ? "" : ", ") + dev.label();
    }
    if (providers.empty()) return "";
    const std::string dir = profile_cache_dir();
    if (dir.empty()) return "";  // nowhere to keep a profile
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string stem = fmt::format("{}/background-{:016x}", dir, sdk::fnv1a(fs::absolute(model.file().path, ec).string()));
    const std::string lock = stem + ".lock", log = stem + ".log";
    pid_t holder = 0;
    if (!take_lock(lock, holder))
        return holder ? fmt::format("a background profile of this model is already running (pid {}, log {})", holder, log) : "";
    std::string list;
    for (const std::string& p : providers) list += (list.empty() ? "" : ",") + p;
    const std::string exe = self_path();
    std::vector<std::string> args = {exe, "profile", "-m", model.file().path, "--providers", list};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own session: Ctrl-C in this terminal after the run does not reach it.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t pid = 0;
    const int err = exe.empty() ? ENOENT : posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
        fs::remove(lock, ec);
        return fmt::format("could not start the background profile: {}", std::strerror(err));
    }
    std::ofstream(lock) << pid << "\n";
    return fmt::format("profiling {} in the background (pid {}, log {}); later runs plan with what it measures", devices, pid, log);
}

}  // namespace hetero::cli
