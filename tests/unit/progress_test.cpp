// hetero::ProgressTask reports begin, cumulative updates and end to the
// installed reporter; nothing is reported without one; end also comes when
// an exception unwinds through the task.
#include <hetero/progress.hpp>
#include <hetero/model/random_model.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct RecordingReporter : hetero::ProgressReporter {
    std::vector<std::string> events;
    void begin(const std::string& what, uint64_t total, const std::string& unit) override {
        events.push_back("begin " + what + " " + std::to_string(total) + " " + unit);
    }
    void update(uint64_t done) override { events.push_back("update " + std::to_string(done)); }
    void end() override { events.push_back("end"); }
};

struct InstalledReporter {
    std::shared_ptr<RecordingReporter> r = std::make_shared<RecordingReporter>();
    InstalledReporter() { hetero::set_progress_reporter(r); }
    ~InstalledReporter() { hetero::set_progress_reporter(nullptr); }
};

TEST(Progress, ReportsBeginCumulativeUpdatesAndEnd) {
    InstalledReporter installed;
    {
        hetero::ProgressTask task("copying", 10, "B");
        task.advance(3);
        task.advance(7);
    }
    EXPECT_EQ(installed.r->events, (std::vector<std::string>{"begin copying 10 B", "update 3", "update 10", "end"}));
}

TEST(Progress, EndsWhenAnExceptionUnwinds) {
    InstalledReporter installed;
    try {
        hetero::ProgressTask task("failing", 2, "steps");
        task.advance(1);
        throw std::runtime_error("boom");
    } catch (const std::runtime_error&) {
    }
    ASSERT_FALSE(installed.r->events.empty());
    EXPECT_EQ(installed.r->events.back(), "end");
}

TEST(Progress, NothingWithoutAReporter) {
    hetero::set_progress_reporter(nullptr);
    hetero::ProgressTask task("unseen", 1);
    task.advance(1);  // must not crash
}

TEST(Progress, GeneratedModelReportsEveryStep) {
    InstalledReporter installed;
    const auto path = hetero::test::temp_path("progress_test.gguf");
    hetero::write_random_model(path.string(), hetero::random_model_preset("tiny"), 0 /* f32 */, 1);
    std::filesystem::remove(path);
    const auto& e = installed.r->events;
    ASSERT_GE(e.size(), 2u);
    EXPECT_EQ(e.front().rfind("begin generating", 0), 0u) << e.front();
    EXPECT_EQ(e.back(), "end");
    // tiny has 2 layers: embedding, two layers, output.
    EXPECT_EQ(e[e.size() - 2], "update 4");
}

}  // namespace
