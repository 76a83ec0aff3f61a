#include <hetero/log.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace hetero {
namespace {

LogLevel level_from_env() {
    const char* v = std::getenv("HETERO_LOG");
    if (!v) return LogLevel::warn;
    if (!std::strcmp(v, "debug")) return LogLevel::debug;
    if (!std::strcmp(v, "info")) return LogLevel::info;
    if (!std::strcmp(v, "error")) return LogLevel::error;
    if (!std::strcmp(v, "off")) return LogLevel::off;
    return LogLevel::warn;
}

std::atomic<int>& level_ref() {
    static std::atomic<int> level{int(level_from_env())};
    return level;
}

std::mutex& sink_mutex() {
    static std::mutex m;
    return m;
}

std::function<void(LogLevel, const std::string&)>& sink() {
    static std::function<void(LogLevel, const std::string&)> s;
    return s;
}

const char* prefix(LogLevel l) {
    switch (l) {
        case LogLevel::debug: return "hetero: debug: ";
        case LogLevel::info: return "hetero: ";
        case LogLevel::warn: return "hetero: warning: ";
        default: return "hetero: error: ";
    }
}

}  // namespace

void set_log_level(LogLevel level) { level_ref() = int(level); }
LogLevel log_level() { return LogLevel(level_ref().load()); }

void set_log_sink(std::function<void(LogLevel, const std::string&)> s) {
    std::lock_guard<std::mutex> lock(sink_mutex());
    sink() = std::move(s);
}

void log(LogLevel level, const std::string& message) {
    if (int(level) < level_ref().load()) return;
    std::lock_guard<std::mutex> lock(sink_mutex());
    if (sink()) {
        sink()(level, message);
        return;
    }
    std::fprintf(stderr, "%s%s\n", prefix(level), message.c_str());
}

}  // namespace hetero
