#include <hetero/error.hpp>
#include <hetero/runtime/sampler.hpp>

#include <algorithm>
#include <cmath>

namespace hetero {

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {
    if (!(options.temperature >= 0.f)) throw Error("temperature must be >= 0");
    if (options.top_k < 0) throw Error("top-k must be >= 0");
    if (!(options.top_p > 0.f && options.top_p <= 1.f)) throw Error("top-p must be in (0, 1]");
}

int32_t Sampler::sample(const std::vector<float>& logits) {
    if (logits.empty()) throw Error("sampler: empty logits");
    if (options_.temperature == 0.f) {
        // First maximum wins ties, as llama2.c's argmax does.
        return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    candidates_.clear();
    for (size_t i = 0; i < logits.size(); ++i) candidates_.emplace_back(logits[i], int32_t(i));
    const size_t k = options_.top_k > 0 ? std::min<size_t>(size_t(options_.top_k), candidates_.size()) : candidates_.size();
    auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
    std::partial_sort(candidates_.begin(), candidates_.begin() + long(k), candidates_.end(), by_logit);
    candidates_.resize(k);
    // Softmax at the temperature over the kept candidates.
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
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += candidates_[i].first;
    const double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
    double acc = 0;
    for (size_t i = 0; i < keep; ++i) {
        acc += candidates_[i].first;
        if (r < acc) return candidates_[i].second;
    }
    return candidates_[keep - 1].second;
}

}  // namespace hetero
