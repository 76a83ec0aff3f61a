// One embeddings request on the server's worker: its inputs (token ids) are
// embedded one per round of the worker, between the decode steps of the
// running completions, in the session's sequence kept for embeddings.
#pragma once

#include <hetero/chat/embedding.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace hetero::serve {

class EmbeddingJob {
public:
    EmbeddingJob(std::vector<std::vector<int32_t>> inputs, EmbeddingOptions options) : inputs_(std::move(inputs)), options_(options) {}

    // Waits for the end; one vector per input, or throws the worker's error
    // as hetero::Error (ShuttingDown when the server stopped first).
    const std::vector<std::vector<float>>& wait();
    bool wait_for_end(std::chrono::milliseconds timeout);
    // Stops it before its next input (a client went away).
    void cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load(); }

    const std::vector<std::vector<int32_t>>& inputs() const { return inputs_; }
    const EmbeddingOptions& options() const { return options_; }

private:
    friend class GenerationQueue;
    // The worker's: the next input's vector, or the end.
    void add(std::vector<float> v) { vectors_.push_back(std::move(v)); }
    bool complete() const { return vectors_.size() == inputs_.size(); }
    void finish(std::string error, bool dropped = false);

    std::vector<std::vector<int32_t>> inputs_;
    EmbeddingOptions options_;
    std::atomic<bool> cancelled_{false};
    std::vector<std::vector<float>> vectors_;  // written by the worker until finish()
    std::mutex mutex_;
    std::condition_variable changed_;
    bool done_ = false, dropped_ = false;
    std::string error_;
};

}  // namespace hetero::serve
