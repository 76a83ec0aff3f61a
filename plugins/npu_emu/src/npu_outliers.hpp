// Shadow outlier execution (llm.npu §3.3). A per-tensor int8 activation
// scale is ruined by the few channels whose values are far larger than the
// rest. With a threshold T calibrated per matmul, the NPU quantises
// clamp(x, -T, T) with scale min(T, max|x|) / 127, and the part beyond T,
// which lives in a handful of channels, is multiplied by those channels'
// float weights on the CPU and added back:
//   y = W8A8(clamp(x)) + (x - clamp(x))[:, outlier channels] . W[:, those]^T
// The outlier term is accumulated in f32 over the outlier channels in
// ascending order, then added to the int8 result: an exact function of the
// inputs like the int8 part.
//
// Calibration: a run with the option outliers=calibrate computes matmuls in
// float and records, per weight tensor, each input channel's largest |x|
// over the calibration text; T is a quantile of those channel maxima (the
// channels above it are the "hot" channels whose float weights stay in host
// memory). Records live in the cache, one file per weight tensor, keyed by
// the weight's bytes.
#pragma once

#include "npu_quant.hpp"

#include <hetero/ep_api.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hetero::npu {

// Input-channel ranges of one weight tensor's activations seen in calibration.
struct ChannelRanges {
    int64_t rows = 0;                // activation rows observed
    std::vector<float> channel_max;  // per input channel: max |x|
    void observe(const float* x, int64_t rows, int64_t k);
    void merge(const ChannelRanges& other);
};

// One file per weight key under `dir`/outliers. load returns nullopt when
// absent; a corrupt or mismatched file is reported through `warning` and
// treated as absent. save merges with what is there (max per channel).
std::optional<ChannelRanges> load_ranges(const std::string& dir, uint64_t weight_key, int64_t k, std::string& warning);
void save_ranges(const std::string& dir, uint64_t weight_key, const ChannelRanges& r);

// The threshold: the `quantile` (0..1] of the channel maxima.
float outlier_threshold(const ChannelRanges& r, double quantile);

// Float weight columns kept for the shadow matmul: the hot channels'
// columns from calibration, plus any other channel the first time an input
// exceeds T in it (read from the weights as stored, then kept).
class ShadowWeights {
public:
    ShadowWeights(const hetero_tensor_desc& w, const uint8_t* data, float threshold, const ChannelRanges& ranges);
    float threshold() const { return threshold_; }
    size_t hot_channels() const;
    uint64_t bytes() const;
    // Loads the columns of `channels` not loaded yet, in one pass over W.
    void load(const std::vector<int64_t>& channels);
    // Column c of W (m floats); load() it first.
    const float* column(int64_t c) const { return columns_[size_t(c)].data(); }

private:
    hetero_tensor_desc desc_;
    const uint8_t* data_;
    float threshold_;
    int64_t rows_ = 0, k_ = 0;
    mutable std::mutex mu_;
    std::vector<std::vector<float>> columns_;  // per channel; empty = not loaded
};

struct ShadowResult {
    int64_t outlier_channels = 0;  // channels with any |x| > T in this input
};

// y [n, m] = W8A8 of x clamped to T (scale min(T, max|x|) / 127) plus the
// float outlier term. qx is scratch of n*k.
ShadowResult matmul_shadow(const float* x, int64_t n, const Int8Weights& w, ShadowWeights& shadow, std::vector<int8_t>& qx, float* y);

// Plain float matmul y = x . W^T with weights dequantised to f32 (the
// calibration run: activations downstream stay those of the float model).
void matmul_f32(const float* x, int64_t n, const hetero_tensor_desc& w, const uint8_t* data, float* y);

}  // namespace hetero::npu
