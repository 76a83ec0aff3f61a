#include "server_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace hetero::serve {

namespace {

std::string route_of(const std::string& path) {
    for (const char* route : {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics"})
        if (path == route) return path;
    if (path.starts_with("/v1/models/")) return "/v1/models/{id}";
    return "other";
}

void header(std::string& out, const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

void ServerMetrics::count_response(const std::string& path, int status) {
    std::lock_guard lock(mutex_);
    ++responses_[{route_of(path), status}];
}

std::shared_ptr<void> ServerMetrics::track_in_flight() {
    in_flight_.fetch_add(1);
    return std::shared_ptr<void>(nullptr, [this](void*) { in_flight_.fetch_sub(1); });
}

void ServerMetrics::count_generation(int32_t prompt_tokens, int32_t generated_tokens, double first_token_seconds, double decode_seconds) {
    std::lock_guard lock(mutex_);
    prompt_tokens_ += uint64_t(std::max(prompt_tokens, 0));
    generated_tokens_ += uint64_t(std::max(generated_tokens, 0));
    if (generated_tokens > 0 && decode_seconds > 0) last_tokens_per_second_ = generated_tokens / decode_seconds;
    if (first_token_seconds < 0) return;
    const auto bucket = std::lower_bound(kFirstTokenBuckets.begin(), kFirstTokenBuckets.end(), first_token_seconds);
    if (bucket != kFirstTokenBuckets.end()) ++first_token_buckets_[size_t(std::distance(kFirstTokenBuckets.begin(), bucket))];
    ++first_token_count_;
    first_token_sum_ += first_token_seconds;
}

std::string ServerMetrics::render(size_t queue_depth) const {
    std::lock_guard lock(mutex_);
    std::string out;
    header(out, "hetero_requests_total", "counter", "HTTP responses by endpoint and status.");
    for (const auto& [key, count] : responses_)
        out += fmt::format("hetero_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, count);
    header(out, "hetero_prompt_tokens_total", "counter", "Prompt tokens of finished generations (those the KV cache already held included).");
    out += fmt::format("hetero_prompt_tokens_total {}\n", prompt_tokens_);
    header(out, "hetero_generated_tokens_total", "counter", "Tokens generated.");
    out += fmt::format("hetero_generated_tokens_total {}\n", generated_tokens_);
    header(out, "hetero_queue_depth", "gauge", "Generation requests waiting for the worker.");
    out += fmt::format("hetero_queue_depth {}\n", queue_depth);
    header(out, "hetero_requests_in_flight", "gauge", "Generation requests received and not yet answered (waiting, running or streaming).");
    out += fmt::format("hetero_requests_in_flight {}\n", in_flight_.load());
    header(out, "hetero_tokens_per_second", "gauge", "Decode speed of the last finished generation, in generated tokens per second.");
    out += fmt::format("hetero_tokens_per_second {}\n", last_tokens_per_second_);
    header(out, "hetero_time_to_first_token_seconds", "histogram", "From a generation request's arrival (its wait in the queue included) to its first sampled token.");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kFirstTokenBuckets.size(); ++i) {
        cumulative += first_token_buckets_[i];
        out += fmt::format("hetero_time_to_first_token_seconds_bucket{{le=\"{}\"}} {}\n", kFirstTokenBuckets[i], cumulative);
    }
    out += fmt::format("hetero_time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {}\n", first_token_count_);
    out += fmt::format("hetero_time_to_first_token_seconds_sum {}\n", first_token_sum_);
    out += fmt::format("hetero_time_to_first_token_seconds_count {}\n", first_token_count_);
    return out;
}

}  // namespace hetero::serve
