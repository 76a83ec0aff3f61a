// What `hetero serve` counts for GET /metrics, in Prometheus' text format:
// responses by endpoint and status, prompt and generated tokens, requests
// waiting for the worker and in flight, the decode speed of the last
// generation, and a histogram of the time to first token.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace hetero::serve {

class ServerMetrics {
public:
    // One HTTP response. Paths are folded into the routes the server has
    // ("/v1/models/{id}"; anything unknown is "other"), so a client cannot
    // grow the label set.
    void count_response(const std::string& path, int status);
    // Counts a generation request as in flight until the returned token is
    // released (when its reply is sent, or its client left).
    std::shared_ptr<void> track_in_flight();
    // A finished generation. `first_token_seconds` counts from its arrival,
    // its wait in the queue included; < 0 when it sampled no token.
    void count_generation(int32_t prompt_tokens, int32_t generated_tokens, double first_token_seconds, double decode_seconds);

    // The exposition text; `queue_depth` is read from the queue at the time.
    std::string render(size_t queue_depth) const;

    // Upper bounds of the time-to-first-token buckets, in seconds (+Inf after them).
    static constexpr std::array<double, 11> kFirstTokenBuckets = {0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, uint64_t> responses_;
    uint64_t prompt_tokens_ = 0, generated_tokens_ = 0;
    double last_tokens_per_second_ = 0;
    std::array<uint64_t, kFirstTokenBuckets.size()> first_token_buckets_{};  // not cumulative
    uint64_t first_token_count_ = 0;
    double first_token_sum_ = 0;
    std::atomic<int64_t> in_flight_{0};
};

}  // namespace hetero::serve
