// W8A8 arithmetic of the emulated NPU, defined exactly (the conformance kit's
// reference::matmul_w8a8 implements the same definition independently):
//   scale s = max|v| / 127 (f32) over a weight row (per channel) or the
//   whole weight (per tensor), and over the whole activation tensor;
//   q(v) = clamp(round_half_away(v / s), -127, 127), 0 where s = 0;
//   y[i][r] = f32(sum_k qx[i][k] * qw[r][k]  (int32)) * (s_x * s_w[r]).
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <vector>

namespace hetero::npu {

struct Int8Weights {
    int64_t rows = 0, k = 0;
    std::vector<int8_t> q;      // rows x k
    std::vector<float> scale;   // per row (equal values when per tensor)
};

int8_t quantize_value(float v, float scale);

// W [rows, k] of any weight dtype, requantised to int8.
Int8Weights quantize_weights(const hetero_tensor_desc& w, const uint8_t* data, bool per_tensor);

// x [count] to int8 with one scale; returns the scale.
float quantize_activations(const float* x, int64_t count, int8_t* q);

// y [n, rows] = x [n, k] (int8, scale sx) times W^T.
void matmul_w8a8(const int8_t* qx, float sx, int64_t n, const Int8Weights& w, float* y);

}  // namespace hetero::npu
