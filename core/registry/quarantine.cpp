#include "quarantine.hpp"

#include "../util/plugin_quarantine.hpp"

#include <hetero/log.hpp>
#include <hetero/sdk/cache_dir.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/auxv.h>
#include <sys/stat.h>

namespace hetero::registry_detail {

namespace fs = std::filesystem;

namespace {

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    return a == b || fs::weakly_canonical(a, ea) == fs::weakly_canonical(b, eb);
}

// "execute" from the restart list's "a_device_query" form.
std::string call_text(std::string call) {
    for (char& c : call)
        if (c == '_') c = ' ';
    return call;
}

// The line for `path` in HETERO_CRASHED_PLUGINS, as "it crashed in ... ", or "".
std::string crashed_before_restart(const std::string& path) {
    const char* list = ::getauxval(AT_SECURE) ? nullptr : std::getenv(crash_detail::kCrashedPluginsEnv);
    if (!list) return "";
    std::istringstream lines(list);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string signal, call, plugin;
        if (!(fields >> signal >> call) || !std::getline(fields >> std::ws, plugin)) continue;
        if (same_file(plugin, path)) return fmt::format("it crashed in {} ({}) in the previous attempt", call_text(call), signal);
    }
    return "";
}

std::map<std::string, std::string> read_record(const fs::path& file) {
    std::map<std::string, std::string> fields;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (const size_t eq = line.find('='); eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
    return fields;
}

std::string local_time(const std::string& unix_seconds) {
    const std::time_t t = std::time_t(std::strtoll(unix_seconds.c_str(), nullptr, 10));
    std::tm tm{};
    char text[32] = "an unknown time";
    if (t > 0 && ::localtime_r(&t, &tm)) std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
    return text;
}

}  // namespace

std::string crash_exclusion(const std::string& path, bool retry) {
    if (std::string why = crashed_before_restart(path); !why.empty()) return why;
    const std::string dir = sdk::user_cache_dir(crash_detail::kQuarantineSubdir);
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return "";
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (!entry.is_regular_file(ec) || entry.path().filename().string().find(".tmp.") != std::string::npos) continue;
        std::map<std::string, std::string> r = read_record(entry.path());
        if (r["path"].empty() || !same_file(r["path"], path)) continue;
        const std::string crash = fmt::format("it crashed in {} ({}) on {}", r["call"], r["signal"], local_time(r["time"]));
        struct stat st {};
        const bool same_version = ::stat(path.c_str(), &st) == 0 && std::to_string(uint64_t(st.st_size)) == r["size"] &&
                                  std::to_string(uint64_t(st.st_mtim.tv_sec) * 1000000000u + uint64_t(st.st_mtim.tv_nsec)) == r["mtime_ns"];
        if (same_version && !retry)
            return fmt::format("quarantined: {}; it is tried again once the file changes, with --retry-crashed, or once {} is deleted", crash,
                               entry.path().string());
        fs::remove(entry.path(), ec);
        log(LogLevel::warn, fmt::format("plugin {} was quarantined ({}); {}: trying it again", path, crash,
                                        retry ? "--retry-crashed" : "the file has changed since"));
    }
    return "";
}

}  // namespace hetero::registry_detail
