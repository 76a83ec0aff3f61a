#include "progress_bar.hpp"

#include <hetero/progress.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace hetero::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string amount(uint64_t v, const std::string& unit) {
    if (unit != "B") return fmt::format("{} {}", v, unit);
    if (v >= (uint64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(v) / double(uint64_t(1) << 30));
    return fmt::format("{:.1f} MiB", double(v) / double(1 << 20));
}

class TerminalBar : public ProgressReporter {
public:
    explicit TerminalBar(bool draw_at_once) : delay_(draw_at_once ? 0.0 : 2.0) {}

    void begin(const std::string& what, uint64_t total, const std::string& unit) override {
        std::lock_guard<std::mutex> lock(mu_);
        if (depth_++ > 0) return;  // only the outermost operation is shown
        what_ = what;
        unit_ = unit;
        total_ = total;
        done_ = 0;
        drawn_ = false;
        start_ = last_draw_ = Clock::now();
        if (delay_ == 0.0) draw(start_);
    }

    void update(uint64_t done) override {
        std::lock_guard<std::mutex> lock(mu_);
        if (depth_ != 1) return;
        done_ = done;
        const auto now = Clock::now();
        if (seconds(start_, now) < delay_ || seconds(last_draw_, now) < 0.1) return;
        draw(now);
    }

    void end() override {
        std::lock_guard<std::mutex> lock(mu_);
        if (depth_ == 0 || --depth_ > 0) return;
        if (!drawn_) return;  // finished before the bar was worth showing
        draw(Clock::now());
        std::fputc('\n', stderr);
        std::fflush(stderr);
    }

private:
    static double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

    void draw(Clock::time_point now) {
        constexpr int kWidth = 30;
        const double frac = total_ ? std::min(1.0, double(done_) / double(total_)) : 0.0;
        const int filled = int(frac * kWidth);
        const std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kWidth - filled), ' ');
        fmt::print(stderr, "\r{} [{}] {:3.0f}% {} of {}, {:.1f} s", what_, bar, frac * 100, amount(done_, unit_),
                   amount(total_, unit_), seconds(start_, now));
        std::fflush(stderr);
        drawn_ = true;
        last_draw_ = now;
    }

    const double delay_;
    std::mutex mu_;
    int depth_ = 0;
    std::string what_, unit_;
    uint64_t total_ = 0, done_ = 0;
    bool drawn_ = false;
    Clock::time_point start_, last_draw_;
};

}  // namespace

void install_progress_bar() {
    const char* mode = std::getenv("HETERO_PROGRESS");
    const bool always = mode && !std::strcmp(mode, "always");
    if (mode && !std::strcmp(mode, "never")) return;
    if (!always && !isatty(STDERR_FILENO)) return;
    set_progress_reporter(std::make_shared<TerminalBar>(always));
}

}  // namespace hetero::cli
