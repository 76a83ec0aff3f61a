#include <hetero/error.hpp>
#include <hetero/runtime/sampler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace hetero {

namespace {

bool within(float x, float lo, float hi) { return x >= lo && x <= hi; }  // false for NaN

// The index of the first largest value, as std::max_element gives it, in
// four lanes at once (GCC's vector extension at 16 bytes, which every target
// has: SSE2, NEON). Over a 32k vocabulary that is 10 us against
// max_element's 26-96 us, which were a tenth of a batched server step's host
// time; as plain loops, or at 32 bytes on a 16-byte target, the compiler
// kept a serial chain. A lane keeps its first maximum; ties between lanes go
// to the lower index; the tail's indices are all higher, so it must be larger.
size_t first_argmax(const float* v, size_t n) {
    using Floats = float __attribute__((vector_size(16)));
    using Ints = int32_t __attribute__((vector_size(16)));
    constexpr size_t L = 4;
    if (n < 2 * L || n > size_t(INT32_MAX)) return size_t(std::max_element(v, v + n) - v);
    Floats best;
    std::memcpy(&best, v, sizeof best);
    Ints at = {0, 1, 2, 3}, index = at;
    size_t i = L;
    for (; i + L <= n; i += L) {
        Floats x;
        std::memcpy(&x, v + i, sizeof x);
        index += int32_t(L);
        const Ints more = x > best;
        best = more ? x : best;
        at = more ? index : at;
    }
    size_t r = size_t(at[0]);
    for (size_t j = 1; j < L; ++j)
        if (best[j] > v[r] || (best[j] == v[r] && size_t(at[j]) < r)) r = size_t(at[j]);
    for (; i < n; ++i)
        if (v[i] > v[r]) r = i;
    return r;
}

}  // namespace

void check_logit_bias(const SamplerOptions& options, int64_t n_vocab) {
    for (const auto& [token, bias] : options.logit_bias)
        if (token < 0 || token >= n_vocab)
            throw Error(fmt::format("logit_bias names token {}, which is not in the vocabulary (token ids 0 .. {})", token, n_vocab - 1));
}

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {
    if (!(options.temperature >= 0.f) || std::isinf(options.temperature)) throw Error("temperature must be >= 0");
    if (options.top_k < 0) throw Error("top-k must be >= 0");
    if (!(options.top_p > 0.f && options.top_p <= 1.f)) throw Error("top-p must be in (0, 1]");
    if (!within(options.min_p, 0.f, 1.f)) throw Error(fmt::format("min-p is {}: give a value in [0, 1] (0 = off)", options.min_p));
    if (!(options.repetition_penalty > 0.f) || std::isinf(options.repetition_penalty))
        throw Error(fmt::format("repetition penalty is {}: give a value > 0 (1 = off)", options.repetition_penalty));
    if (options.repetition_window < -1)
        throw Error(fmt::format("repetition window is {}: give a number of tokens, 0 (none) or -1 (all)", options.repetition_window));
    if (!within(options.presence_penalty, -2.f, 2.f))
        throw Error(fmt::format("presence penalty is {}: give a value in [-2, 2]", options.presence_penalty));
    if (!within(options.frequency_penalty, -2.f, 2.f))
        throw Error(fmt::format("frequency penalty is {}: give a value in [-2, 2]", options.frequency_penalty));
    for (const auto& [token, bias] : options.logit_bias) {
        if (token < 0) throw Error(fmt::format("logit_bias names token {}: token ids are >= 0", token));
        if (!within(bias, -100.f, 100.f)) throw Error(fmt::format("logit_bias of token {} is {}: give a value in [-100, 100]", token, bias));
    }
}

bool Sampler::adjusts_logits() const {
    return !window_counts_.empty() || !reply_counts_.empty() || !options_.logit_bias.empty();
}

void Sampler::adjust(std::vector<std::pair<float, int32_t>>& by_token) const {
    const auto at = [&](int32_t token) -> float& {
        if (size_t(token) >= by_token.size())
            throw Error(fmt::format("the sampler was given token {} but the logits cover {} tokens", token, by_token.size()));
        return by_token[size_t(token)].first;
    };
    // Once per distinct token in the window, as llama.cpp's repeat penalty.
    for (const auto& [token, count] : window_counts_) {
        float& logit = at(token);
        logit = logit > 0 ? logit / options_.repetition_penalty : logit * options_.repetition_penalty;
    }
    for (const auto& [token, count] : reply_counts_)
        at(token) -= float(count) * options_.frequency_penalty + options_.presence_penalty;
    for (const auto& [token, bias] : options_.logit_bias) {
        if (size_t(token) >= by_token.size())
            throw Error(fmt::format("logit_bias names token {}, which is not in the vocabulary (token ids 0 .. {})", token, by_token.size() - 1));
        by_token[size_t(token)].first += bias;
    }
}

size_t Sampler::prepare(const std::vector<float>& logits) {
    if (logits.empty()) throw Error("sampler: empty logits");
    candidates_.clear();
    if (options_.temperature == 0.f && !adjusts_logits()) {
        // First maximum wins ties, as llama2.c's argmax does.
        candidates_.emplace_back(1.f, int32_t(first_argmax(logits.data(), logits.size())));
        return 1;
    }
    for (size_t i = 0; i < logits.size(); ++i) candidates_.emplace_back(logits[i], int32_t(i));
    if (adjusts_logits()) adjust(candidates_);
    if (options_.temperature == 0.f) {
        size_t best = 0;
        for (size_t i = 1; i < candidates_.size(); ++i)
            if (candidates_[i].first > candidates_[best].first) best = i;
        candidates_ = {{1.f, candidates_[best].second}};
        return 1;
    }
    const size_t k = options_.top_k > 0 ? std::min<size_t>(size_t(options_.top_k), candidates_.size()) : candidates_.size();
    auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
    std::partial_sort(candidates_.begin(), candidates_.begin() + long(k), candidates_.end(), by_logit);
    candidates_.resize(k);
    // Softmax at the temperature over the kept candidates; the likeliest weighs 1.
    const float max = candidates_.front().first;
    double sum = 0;
    for (auto& c : candidates_) {
        c.first = float(std::exp(double(c.first - max) / options_.temperature));
        sum += c.first;
    }
    size_t keep = candidates_.size();
    if (options_.top_p < 1.f) {
        double acc = 0;
        for (size_t i = 0; i < candidates_.size(); ++i) {
            acc += candidates_[i].first / sum;
            if (acc >= options_.top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    if (options_.min_p > 0.f) {
        // Weights are relative to the likeliest token's, so the threshold is min_p itself.
        size_t n = 1;
        while (n < keep && candidates_[n].first >= options_.min_p * candidates_.front().first) ++n;
        keep = n;
    }
    candidates_.resize(keep);
    return keep;
}

std::vector<TokenChance> Sampler::distribution(const std::vector<float>& logits) {
    const size_t keep = prepare(logits);
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += candidates_[i].first;
    std::vector<TokenChance> out;
    for (size_t i = 0; i < keep; ++i) out.push_back({candidates_[i].second, candidates_[i].first / total});
    return out;
}

int32_t Sampler::sample(const std::vector<float>& logits) {
    const size_t keep = prepare(logits);
    int32_t token = candidates_[keep - 1].second;
    // One draw per token whenever sampling, even from a single candidate: a
    // seed gives the same draws whatever top-k, top-p or min-p cut.
    if (options_.temperature > 0.f) {
        double total = 0;
        for (size_t i = 0; i < keep; ++i) total += candidates_[i].first;
        const double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
        double acc = 0;
        for (size_t i = 0; i < keep; ++i) {
            acc += candidates_[i].first;
            if (r < acc) {
                token = candidates_[i].second;
                break;
            }
        }
    }
    remember(token, true);
    return token;
}

void Sampler::add_context(const std::vector<int32_t>& tokens) {
    for (int32_t t : tokens) remember(t, false);
}

void Sampler::remember(int32_t token, bool in_reply) {
    if (in_reply && (options_.presence_penalty != 0.f || options_.frequency_penalty != 0.f)) ++reply_counts_[token];
    if (options_.repetition_penalty == 1.f || options_.repetition_window == 0) return;
    window_.push_back(token);
    ++window_counts_[token];
    if (options_.repetition_window > 0 && window_.size() > size_t(options_.repetition_window)) {
        const int32_t old = window_.front();
        window_.pop_front();
        if (--window_counts_[old] == 0) window_counts_.erase(old);
    }
}

}  // namespace hetero
