// Test helper: collects the core's log lines while in scope.
#pragma once

#include <hetero/log.hpp>

#include <mutex>
#include <string>
#include <vector>

namespace hetero::test {

struct CapturedLog {
    std::vector<std::string> lines;
    std::mutex m;
    CapturedLog() {
        hetero::set_log_sink([this](hetero::LogLevel, const std::string& s) {
            std::lock_guard<std::mutex> lock(m);
            lines.push_back(s);
        });
    }
    ~CapturedLog() { hetero::set_log_sink(nullptr); }
    // Does one line contain both a and b?
    bool contains(const std::string& a, const std::string& b) {
        std::lock_guard<std::mutex> lock(m);
        for (const auto& l : lines)
            if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
        return false;
    }
};

}  // namespace hetero::test
