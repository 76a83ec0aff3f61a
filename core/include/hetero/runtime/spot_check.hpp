// The run-time spot check (`--verify N`): every N decode steps, the step's
// logits are compared with those of a reference session on another device
// (the CPU provider). The reference is fed every token once, in chunks at
// the checks, so it costs a prefill of N tokens per check rather than a
// second decode. A provider whose results disagree is named and treated as
// a failed device (resilient_session.hpp re-plans without it).
#pragma once

#include <hetero/runtime/session.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetero {

// Why two logit vectors of one step disagree, or "" when they agree: the
// device's top token is over kMaxTopGap nats below the reference's top in
// the reference's logits, or the RMS difference of the two (each about its
// mean: a constant shift changes no probability) exceeds kMaxRelativeRms of
// the reference's spread, or a value is not finite.
// The bounds hold for every weight and cache type: the reference runs the
// same weights, and f16 caches or a device's f16 arithmetic move logits by
// well under 1 % of their spread.
inline constexpr double kMaxTopGap = 1.0;
inline constexpr double kMaxRelativeRms = 0.1;
std::string compare_logits(const std::vector<float>& device, const std::vector<float>& reference);
// The largest |difference| of the two logit vectors, each about its mean.
double max_centred_difference(const std::vector<float>& device, const std::vector<float>& reference);
// "top token at most 1 nat below the reference's top, relative RMS at most 0.1".
std::string spot_check_tolerance();

class SpotCheck {
public:
    // `reference` runs the whole model on its own (a single-device plan);
    // `options` as the checked session's (its n_ctx is used; caches f32).
    SpotCheck(const ModelFile& model, const DeviceRef& reference, int every, SessionOptions options);
    ~SpotCheck();

    // Called after each successful forward of `n_tokens` tokens at `pos`;
    // `history` holds every token up to and including them. On every
    // `every`-th decode step (n_tokens == 1) the reference catches up and
    // the logits are compared: "" when they agree or no check was due, else
    // "step S: logits of <checked> differ from the reference <reference> by
    // <max abs difference> (tolerance ...): <why>".
    std::string after_forward(const std::vector<int32_t>& history, int32_t pos, size_t n_tokens, const std::vector<float>& logits,
                              const std::string& checked);

    const DeviceRef& reference() const { return reference_; }
    int checks() const { return checks_; }
    int steps() const { return steps_; }              // decode steps seen
    int tokens_replayed() const { return replayed_; }  // tokens the reference evaluated
    double seconds() const { return seconds_; }       // time in the reference and the comparisons
    const std::vector<std::string>& failures() const { return failures_; }
    // No more checks (the plan now runs on the reference itself).
    void stop() { stopped_ = true; }

private:
    DeviceRef reference_;
    int every_;
    std::unique_ptr<Session> session_;
    int32_t synced_ = 0;  // tokens the reference has evaluated, in order
    int steps_ = 0, checks_ = 0, replayed_ = 0;
    double seconds_ = 0;
    std::vector<std::string> failures_;
    bool stopped_ = false;
};

}  // namespace hetero
