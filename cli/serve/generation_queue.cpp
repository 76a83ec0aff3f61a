#include "generation_queue.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero::serve {

std::optional<std::string> Job::next_piece() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_ || !pieces_.empty(); });
    if (pieces_.empty()) return std::nullopt;
    std::string piece = std::move(pieces_.front());
    pieces_.pop_front();
    return piece;
}

bool Job::wait_for_progress(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return done_ || !pieces_.empty(); });
}

bool Job::wait_for_end(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return done_; });
}

const CompletionResult& Job::wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_; });
    if (dropped_) throw ShuttingDown();
    if (cut_) throw ShuttingDown(fmt::format("the server is shutting down: the reply was cut after {} tokens", result_.n_generated));
    if (!error_.empty()) throw Error(error_);
    return result_;
}

void Job::push(std::string_view piece) {
    {
        std::lock_guard lock(mutex_);
        pieces_.emplace_back(piece);
    }
    changed_.notify_all();
}

void Job::finish(CompletionResult result, std::string error, bool dropped) {
    {
        std::lock_guard lock(mutex_);
        dropped_ = dropped;
        // Stopped mid-way by the shutdown, not by its own end: not a whole reply.
        cut_ = stopped_by_shutdown_.load() && result.finish == FinishReason::cancelled;
        result_ = std::move(result);
        error_ = std::move(error);
        done_ = true;
    }
    changed_.notify_all();
}

GenerationQueue::GenerationQueue(BatchEvaluator& session, const Tokenizer& tokenizer, QueueOptions options, OnJobEnd on_end)
    : session_(session), slots_(session, tokenizer, options.prefill_chunk, session.n_seq() - (options.embeddings ? 1 : 0)), tokenizer_(tokenizer), options_(options), on_end_(std::move(on_end)),
      worker_([this] { work(); }) {}

size_t GenerationQueue::waiting() {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

size_t GenerationQueue::running() {
    std::lock_guard lock(mutex_);
    return running_.size();
}

GenerationQueue::~GenerationQueue() {
    shutdown();
    worker_.join();
}

std::shared_ptr<Job> GenerationQueue::submit(std::string label, std::vector<int32_t> prompt, CompletionOptions options) {
    auto job = std::make_shared<Job>(std::move(label), std::move(prompt), std::move(options));
    job->options_.interrupt = &job->cancelled_;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            job->finish({}, "", true);
            return job;
        }
        if (queue_.size() >= options_.max_waiting) throw QueueFull(queue_.size());
        queue_.push_back(job);
    }
    wake_.notify_one();
    return job;
}

std::shared_ptr<EmbeddingJob> GenerationQueue::submit_embedding(std::vector<std::vector<int32_t>> inputs, EmbeddingOptions options) {
    if (!options_.embeddings) throw Error("this server keeps no sequence for embeddings");
    auto job = std::make_shared<EmbeddingJob>(std::move(inputs), options);
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            job->finish("", true);
            return job;
        }
        if (embeddings_.size() >= options_.max_waiting) throw QueueFull(embeddings_.size());
        embeddings_.push_back(job);
    }
    wake_.notify_one();
    return job;
}

void GenerationQueue::shutdown() {
    std::deque<std::shared_ptr<Job>> dropped;
    std::deque<std::shared_ptr<EmbeddingJob>> dropped_embeddings;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        dropped.swap(queue_);
        dropped_embeddings.swap(embeddings_);
        for (auto& job : running_) job->cancel_for_shutdown();
    }
    wake_.notify_all();
    for (auto& job : dropped) job->finish({}, "", true);
    for (auto& job : dropped_embeddings) job->finish("", true);
}

void GenerationQueue::work() {
    for (;;) {
        std::vector<std::shared_ptr<Job>> admitted;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !embeddings_.empty() || embedding_ || slots_.busy(); });
            if (!embedding_ && !embeddings_.empty()) {
                embedding_ = std::move(embeddings_.front());
                embeddings_.pop_front();
            }
            if (queue_.empty() && !embedding_ && !slots_.busy()) return;  // stopping, nothing left to finish
            // Waiting jobs take the free slots, in arrival order.
            while (!queue_.empty() && int32_t(admitted.size()) < slots_.idle()) {
                admitted.push_back(std::move(queue_.front()));
                queue_.pop_front();
                running_.push_back(admitted.back());
            }
        }
        for (const auto& job : admitted) start(job);
        // One input per round: a large request does not hold the running completions back for all of its inputs.
        if (embedding_) embed_next();
        if (slots_.busy()) slots_.step();
    }
}

void GenerationQueue::embed_next() {
    bool stopping = false;
    {
        std::lock_guard lock(mutex_);
        stopping = stopping_;
    }
    std::shared_ptr<EmbeddingJob> job = embedding_;
    if (stopping || job->cancelled()) {
        embedding_.reset();
        job->finish(stopping ? "" : "cancelled", stopping);
        return;
    }
    try {
        // The sequence no slot holds: its cache is overwritten from position 0 by each input.
        job->add(embed_tokens(session_, session_.n_seq() - 1, job->inputs()[job->vectors_.size()], job->options()));
    } catch (const std::exception& e) {
        embedding_.reset();
        job->finish(e.what());
        return;
    }
    if (job->complete()) {
        embedding_.reset();
        job->finish("");
    }
}

void GenerationQueue::start(const std::shared_ptr<Job>& job) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - job->submitted_).count();
    if (job->cancelled()) {  // its client left while it waited
        CompletionResult result;
        result.finish = FinishReason::cancelled;
        end(job, std::move(result), "", waited);
        return;
    }
    SlotRequest request;
    request.prompt = job->prompt_;
    request.options = job->options_;
    request.on_text = [job](std::string_view piece) {
        job->push(piece);
        return !job->cancelled();
    };
    request.on_end = [this, job, waited](CompletionResult result, std::string error) { end(job, std::move(result), std::move(error), waited); };
    slots_.start(std::move(request));
}

void GenerationQueue::end(const std::shared_ptr<Job>& job, CompletionResult result, std::string error, double waited) {
    // Cancelled between two tokens, the loop reports an interrupt: it is the same thing here.
    if (result.finish == FinishReason::interrupted) result.finish = FinishReason::cancelled;
    {
        std::lock_guard lock(mutex_);
        running_.erase(std::remove(running_.begin(), running_.end(), job), running_.end());
    }
    // The seed is logged (OpenAI's responses have no field for it), so a reply can be asked for again.
    const SamplerOptions& sampling = job->options_.sampling;
    const std::string drawn = sampling.temperature > 0 ? fmt::format("seed {}", sampling.seed) : "greedy";
    if (error.empty())
        fmt::print(stderr, "{}: prompt {} tokens ({} cached), {} generated in {:.0f} ms, {}, {}\n", job->label_, job->prompt_.size(),
                   result.n_reused, result.n_generated, (result.prefill_seconds + result.decode_seconds) * 1e3,
                   finish_reason_name(result.finish), drawn);
    else
        fmt::print(stderr, "{}: failed: {}\n", job->label_, error);
    if (on_end_ && error.empty() && (result.first_token_seconds > 0 || result.n_generated > 0))
        on_end_({int32_t(job->prompt_.size()), result.n_generated,
                 result.first_token_seconds > 0 ? waited + result.first_token_seconds : -1.0, result.decode_seconds});
    job->finish(std::move(result), std::move(error));
}

}  // namespace hetero::serve
