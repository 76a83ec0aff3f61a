#include "npu_quant.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>

namespace hetero::npu {

int8_t quantize_value(float v, float scale) {
    if (scale == 0.0f) return 0;
    const float r = std::round(v / scale);
    return int8_t(std::clamp(r, -127.0f, 127.0f));
}

Int8Weights quantize_weights(const hetero_tensor_desc& w, const uint8_t* data, bool per_tensor) {
    Int8Weights out;
    out.rows = w.shape[0];
    out.k = sdk::row_width(w);
    const uint64_t row_bytes = sdk::row_bytes(w.dtype, out.k);
    std::vector<float> f(size_t(out.rows * out.k));
    for (int64_t r = 0; r < out.rows; ++r) sdk::row_to_f32(w.dtype, data + uint64_t(r) * row_bytes, f.data() + r * out.k, out.k);
    out.scale.assign(size_t(out.rows), 0.0f);
    float all = 0.0f;
    for (int64_t r = 0; r < out.rows; ++r) {
        float amax = 0.0f;
        for (int64_t c = 0; c < out.k; ++c) amax = std::max(amax, std::fabs(f[size_t(r * out.k + c)]));
        out.scale[size_t(r)] = amax / 127.0f;
        all = std::max(all, amax);
    }
    if (per_tensor) std::fill(out.scale.begin(), out.scale.end(), all / 127.0f);
    out.q.resize(f.size());
    for (int64_t r = 0; r < out.rows; ++r)
        for (int64_t c = 0; c < out.k; ++c) out.q[size_t(r * out.k + c)] = quantize_value(f[size_t(r * out.k + c)], out.scale[size_t(r)]);
    return out;
}

float quantize_activations(const float* x, int64_t count, int8_t* q) {
    float amax = 0.0f;
    for (int64_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float s = amax / 127.0f;
    for (int64_t i = 0; i < count; ++i) q[i] = quantize_value(x[i], s);
    return s;
}

void matmul_w8a8(const int8_t* qx, float sx, int64_t n, const Int8Weights& w, float* y) {
    const int64_t k = w.k;
    for (int64_t i = 0; i < n; ++i) {
        const int8_t* xr = qx + i * k;
        for (int64_t r = 0; r < w.rows; ++r) {
            const int8_t* wr = w.q.data() + r * k;
            int32_t acc = 0;
            for (int64_t c = 0; c < k; ++c) acc += int32_t(xr[c]) * int32_t(wr[c]);
            y[i * w.rows + r] = float(acc) * (sx * w.scale[size_t(r)]);
        }
    }
}

}  // namespace hetero::npu
