// Minimal leveled logging to stderr (or a test sink). Providers' messages
// arrive here through the host-services table.
#pragma once

#include <functional>
#include <string>

namespace hetero {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
// Replaces the stderr sink (tests capture messages); nullptr restores stderr.
void set_log_sink(std::function<void(LogLevel, const std::string&)> sink);
void log(LogLevel level, const std::string& message);

}  // namespace hetero
