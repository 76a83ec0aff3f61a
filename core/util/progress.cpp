#include <hetero/progress.hpp>

#include <mutex>

namespace hetero {
namespace {

std::mutex& reporter_mutex() {
    static std::mutex m;
    return m;
}

std::shared_ptr<ProgressReporter>& reporter_slot() {
    static std::shared_ptr<ProgressReporter> r;
    return r;
}

}  // namespace

void set_progress_reporter(std::shared_ptr<ProgressReporter> reporter) {
    std::lock_guard<std::mutex> lock(reporter_mutex());
    reporter_slot() = std::move(reporter);
}

ProgressTask::ProgressTask(const std::string& what, uint64_t total, const std::string& unit) {
    {
        std::lock_guard<std::mutex> lock(reporter_mutex());
        reporter_ = reporter_slot();
    }
    if (reporter_) reporter_->begin(what, total, unit);
}

ProgressTask::~ProgressTask() {
    if (reporter_) reporter_->end();
}

void ProgressTask::advance(uint64_t n) {
    done_ += n;
    if (reporter_) reporter_->update(done_);
}

}  // namespace hetero
