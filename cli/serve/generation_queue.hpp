// The server's one worker: it owns the session (and its KV cache) and runs
// queued generations one after another, in arrival order. A job's text is
// handed to the HTTP thread that waits for it piece by piece.
#pragma once

#include <hetero/chat/completion.hpp>
#include <hetero/error.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace hetero::serve {

// A job refused, dropped or cut short because the server is stopping.
class ShuttingDown : public Error {
public:
    ShuttingDown() : Error("the server is shutting down") {}
    explicit ShuttingDown(const std::string& message) : Error(message) {}
};

// What the worker tells of each job it ran (for /metrics).
struct JobReport {
    int32_t n_prompt = 0, n_generated = 0;
    double first_token_seconds = -1;  // from submit() to the first sampled token, its wait included; < 0: none sampled
    double decode_seconds = 0;
};
using OnJobEnd = std::function<void(const JobReport&)>;

class Job {
public:
    Job(std::string label, std::vector<int32_t> prompt, CompletionOptions options)
        : label_(std::move(label)), prompt_(std::move(prompt)), options_(std::move(options)), submitted_(std::chrono::steady_clock::now()) {}

    // Waits for the next piece of text; nullopt once the job has finished
    // and everything was taken.
    std::optional<std::string> next_piece();
    // Waits for the end; the result, or throws the worker's error as hetero::Error
    // (ShuttingDown when the job was dropped unrun or cut by the shutdown).
    const CompletionResult& wait();
    // Waits at most `timeout` for a piece of text or the end; true when one is
    // there (a handler waiting in slices checks its client in between).
    bool wait_for_progress(std::chrono::milliseconds timeout);
    bool wait_for_end(std::chrono::milliseconds timeout);
    // Stops the generation before its next token (a client went away).
    void cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load(); }

private:
    friend class GenerationQueue;
    void push(std::string_view piece);
    void finish(CompletionResult result, std::string error, bool dropped = false);
    void cancel_for_shutdown() {
        stopped_by_shutdown_.store(true);
        cancel();
    }

    std::string label_;  // the response id, for the log
    std::vector<int32_t> prompt_;
    CompletionOptions options_;
    std::chrono::steady_clock::time_point submitted_;
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> stopped_by_shutdown_{false};
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> pieces_;
    bool done_ = false, dropped_ = false, cut_ = false;
    CompletionResult result_;
    std::string error_;
};

class GenerationQueue {
public:
    // `on_end` (may be empty) hears of every job the worker ran, on the worker's thread.
    GenerationQueue(PrefixCache& cache, const Tokenizer& tokenizer, OnJobEnd on_end = {});
    ~GenerationQueue();  // shutdown(), then waits for the worker
    GenerationQueue(const GenerationQueue&) = delete;
    GenerationQueue& operator=(const GenerationQueue&) = delete;

    // `label` names the job in the log line written when it ends.
    std::shared_ptr<Job> submit(std::string label, std::vector<int32_t> prompt, CompletionOptions options);
    // Cancels the running and queued jobs; later submits finish at once.
    void shutdown();
    // Jobs waiting for the worker (the running one not counted).
    size_t waiting();

private:
    void work();

    PrefixCache& cache_;
    const Tokenizer& tokenizer_;
    OnJobEnd on_end_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Job>> queue_;
    std::shared_ptr<Job> running_;
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace hetero::serve
