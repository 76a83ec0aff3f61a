#include "embedding_job.hpp"

#include "generation_queue.hpp"

namespace hetero::serve {

const std::vector<std::vector<float>>& EmbeddingJob::wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_; });
    if (dropped_) throw ShuttingDown();
    if (!error_.empty()) throw Error(error_);
    return vectors_;
}

bool EmbeddingJob::wait_for_end(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return done_; });
}

void EmbeddingJob::finish(std::string error, bool dropped) {
    {
        std::lock_guard lock(mutex_);
        if (done_) return;
        error_ = std::move(error);
        dropped_ = dropped;
        done_ = true;
    }
    changed_.notify_all();
}

}  // namespace hetero::serve
