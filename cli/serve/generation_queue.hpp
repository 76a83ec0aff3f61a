// The server's one worker: it owns the session (and its KV cache) and runs
// the queued generations in its slots (`serve --parallel N`): up to N at
// once, decoded together in batched steps, the others waiting in arrival
// order, at most a given number (more are refused). A job's text is handed
// to the HTTP thread that waits for it piece by piece.
#pragma once

#include <hetero/chat/completion.hpp>
#include <hetero/chat/completion_slots.hpp>
#include <hetero/error.hpp>

#include "embedding_job.hpp"

#include <fmt/format.h>

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
#include <vector>

namespace hetero::serve {

// A job refused, dropped or cut short because the server is stopping.
class ShuttingDown : public Error {
public:
    ShuttingDown() : Error("the server is shutting down") {}
    explicit ShuttingDown(const std::string& message) : Error(message) {}
};

// A job refused because the queue is full (serve answers 503).
class QueueFull : public Error {
public:
    explicit QueueFull(size_t waiting)
        : Error(fmt::format("the server is busy: {} requests are already waiting for a slot; try again later", waiting)) {}
};

// How the worker runs jobs.
struct QueueOptions {
    size_t max_waiting = 64;     // jobs waiting for a slot; submit() refuses more with QueueFull
    int32_t prefill_chunk = 128;  // prompt tokens between two decode steps of the other slots
    // The session's last sequence is kept for embeddings (no slot holds
    // it, so an embedding never touches a completion's KV cache).
    bool embeddings = false;
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
    // One slot per sequence of `session`. `on_end` (may be empty) hears of
    // every job the worker ran, on the worker's thread.
    GenerationQueue(BatchEvaluator& session, const Tokenizer& tokenizer, QueueOptions options, OnJobEnd on_end = {});
    ~GenerationQueue();  // shutdown(), then waits for the worker
    GenerationQueue(const GenerationQueue&) = delete;
    GenerationQueue& operator=(const GenerationQueue&) = delete;

    // `label` names the job in the log line written when it ends. Throws
    // QueueFull when options.max_waiting jobs already wait for a slot.
    std::shared_ptr<Job> submit(std::string label, std::vector<int32_t> prompt, CompletionOptions options);
    // Queues an embeddings request (QueueOptions::embeddings); its inputs are
    // embedded one per worker round, between decode steps. Throws QueueFull
    // as submit() does, hetero::Error when the queue keeps no sequence for
    // embeddings.
    std::shared_ptr<EmbeddingJob> submit_embedding(std::vector<std::vector<int32_t>> inputs, EmbeddingOptions options);
    // Cancels the running and queued jobs; later submits finish at once.
    void shutdown();
    // Jobs waiting for a slot (the running ones not counted).
    size_t waiting();
    // Jobs running in a slot.
    size_t running();

private:
    void work();
    void start(const std::shared_ptr<Job>& job);  // in a slot, on the worker's thread
    void end(const std::shared_ptr<Job>& job, CompletionResult result, std::string error, double waited);
    void embed_next();  // the next input of embedding_, on the worker's thread

    BatchEvaluator& session_;
    CompletionSlots slots_;  // the worker's alone
    const Tokenizer& tokenizer_;
    QueueOptions options_;
    OnJobEnd on_end_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Job>> queue_;
    std::vector<std::shared_ptr<Job>> running_;
    std::deque<std::shared_ptr<EmbeddingJob>> embeddings_;  // waiting
    std::shared_ptr<EmbeddingJob> embedding_;  // the worker's: the one being embedded
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace hetero::serve
