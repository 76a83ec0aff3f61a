// Where hetero and its providers keep what they measured or built (profiles,
// compiled programs, prepared graphs): $XDG_CACHE_HOME/hetero/<sub>, else
// ~/.cache/hetero/<sub>. "" when neither variable is set (a service with no
// home): callers then run without a cache rather than fail.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace hetero::sdk {

inline std::string user_cache_dir(std::string_view sub) {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/hetero/" + std::string(sub);
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/hetero/" + std::string(sub);
    return "";
}

}  // namespace hetero::sdk
