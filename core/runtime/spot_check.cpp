#include <hetero/error.hpp>
#include <hetero/runtime/spot_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace hetero {

std::string compare_logits(const std::vector<float>& device, const std::vector<float>& reference) {
    if (device.size() != reference.size() || reference.empty())
        return fmt::format("{} logits against the reference's {}", device.size(), reference.size());
    size_t top_dev = 0, top_ref = 0;
    double mean_dev = 0, mean_ref = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        if (!std::isfinite(device[i])) return fmt::format("logit {} is {}", i, device[i]);
        if (device[i] > device[top_dev]) top_dev = i;
        if (reference[i] > reference[top_ref]) top_ref = i;
        mean_dev += device[i];
        mean_ref += reference[i];
    }
    mean_dev /= double(reference.size());
    mean_ref /= double(reference.size());
    // Both centred: logits shifted by a constant give the same probabilities.
    double diff2 = 0, spread2 = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        const double d = (device[i] - mean_dev) - (reference[i] - mean_ref);
        diff2 += d * d;
        spread2 += (reference[i] - mean_ref) * (reference[i] - mean_ref);
    }
    const double gap = double(reference[top_ref]) - reference[top_dev];
    const double rel = spread2 > 0 ? std::sqrt(diff2 / spread2) : 0.0;
    if (gap > kMaxTopGap)
        return fmt::format("its top token {} is {:.2f} below the reference's top token {} in the reference's logits (relative RMS difference {:.3f})",
                           top_dev, gap, top_ref, rel);
    if (rel > kMaxRelativeRms) return fmt::format("its logits differ from the reference's by a relative RMS of {:.3f} (at most {})", rel, kMaxRelativeRms);
    return "";
}

double max_centred_difference(const std::vector<float>& device, const std::vector<float>& reference) {
    if (device.size() != reference.size() || reference.empty()) return std::numeric_limits<double>::infinity();
    double mean_dev = 0, mean_ref = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        mean_dev += device[i];
        mean_ref += reference[i];
    }
    mean_dev /= double(reference.size());
    mean_ref /= double(reference.size());
    double worst = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        const double d = std::fabs((device[i] - mean_dev) - (reference[i] - mean_ref));
        if (!(d <= worst)) worst = d;  // NaN wins
    }
    return worst;
}

std::string spot_check_tolerance() {
    return fmt::format("top token at most {} nat below the reference's top, relative RMS at most {}", kMaxTopGap, kMaxRelativeRms);
}

SpotCheck::SpotCheck(const ModelFile& model, const DeviceRef& reference, int every, SessionOptions options)
    : reference_(reference), every_(std::max(1, every)) {
    options.cache_type = CacheType::f32;
    options.trace = nullptr;
    options.cost = nullptr;
    options.all_logits = false;
    options.n_seq = 1;  // it checks sequence 0 alone
    session_ = std::make_unique<Session>(model, plan_single_device(model.hparams.n_layer, {reference}, 0), options);
}

SpotCheck::~SpotCheck() = default;

std::string SpotCheck::after_forward(const std::vector<int32_t>& history, int32_t pos, size_t n_tokens, const std::vector<float>& logits,
                                     const std::string& checked) {
    // A rewind (a new prompt sharing a prefix) makes the reference's later rows stale.
    synced_ = std::min(synced_, pos);
    if (stopped_ || n_tokens != 1 || ++steps_ % every_ != 0) return "";
    const auto t0 = std::chrono::steady_clock::now();
    const int32_t end = int32_t(history.size());
    const std::vector<int32_t> todo(history.begin() + synced_, history.begin() + end);
    const std::vector<float>& ref = session_->forward(todo, synced_);
    synced_ = end;
    replayed_ += int(todo.size());
    ++checks_;
    const std::vector<float> last(ref.end() - long(logits.size()), ref.end());
    std::string why = compare_logits(logits, last);
    if (!why.empty()) {
        why = fmt::format("step {}: logits of {} differ from the reference {} by {:.4g} at most ({}): {}", steps_, checked, reference_.label(),
                          max_centred_difference(logits, last), spot_check_tolerance(), why);
        failures_.push_back(why);
    }
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return why;
}

}  // namespace hetero
