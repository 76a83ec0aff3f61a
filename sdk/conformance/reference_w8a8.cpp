// The W8A8 matmul of int8 NPUs (reference_ops.hpp, matmul_w8a8), written
// out in plain loops as the definition providers are compared with bit for bit.
#include "reference_ops.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <vector>

namespace hetero::reference {

namespace {

int8_t to_int8(float v, float step) {
    if (step == 0.0f) return 0;
    float q = std::round(v / step);
    if (q > 127.0f) q = 127.0f;
    if (q < -127.0f) q = -127.0f;
    return static_cast<int8_t>(q);
}

}  // namespace

void matmul_w8a8(const float* x, int64_t n, const hetero_tensor_desc& w, const uint8_t* w_data, bool w_per_tensor, float* y) {
    const int64_t m = w.shape[0], k = sdk::row_width(w);
    std::vector<float> wf(static_cast<size_t>(m * k));
    for (int64_t r = 0; r < m; ++r) sdk::row_to_f32(w.dtype, w_data + uint64_t(r) * sdk::row_bytes(w.dtype, k), &wf[size_t(r * k)], k);
    std::vector<float> w_step(static_cast<size_t>(m));
    float w_max_all = 0.0f;
    for (int64_t r = 0; r < m; ++r) {
        float mx = 0.0f;
        for (int64_t c = 0; c < k; ++c) mx = std::fmax(mx, std::fabs(wf[size_t(r * k + c)]));
        w_step[size_t(r)] = mx / 127.0f;
        w_max_all = std::fmax(w_max_all, mx);
    }
    if (w_per_tensor)
        for (float& s : w_step) s = w_max_all / 127.0f;
    float x_max = 0.0f;
    for (int64_t i = 0; i < n * k; ++i) x_max = std::fmax(x_max, std::fabs(x[i]));
    const float x_step = x_max / 127.0f;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < m; ++r) {
            int32_t sum = 0;
            for (int64_t c = 0; c < k; ++c)
                sum += int32_t(to_int8(x[i * k + c], x_step)) * int32_t(to_int8(wf[size_t(r * k + c)], w_step[size_t(r)]));
            y[i * m + r] = static_cast<float>(sum) * (x_step * w_step[size_t(r)]);
        }
}

}  // namespace hetero::reference
