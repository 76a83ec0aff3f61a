#include <hetero/model/rope_scaling.hpp>

#include <cmath>
#include <numbers>

namespace hetero {

std::vector<float> llama3_rope_factors(const Llama3RopeScaling& s, double base, int64_t rot_dims) {
    const double long_wavelen = s.original_context / s.low_freq_factor;   // beyond: fully scaled
    const double short_wavelen = s.original_context / s.high_freq_factor; // below: untouched
    std::vector<float> out;
    for (int64_t i = 0; i < rot_dims / 2; ++i) {
        const double freq = std::pow(base, -2.0 * double(i) / double(rot_dims));
        const double wavelen = 2.0 * std::numbers::pi / freq;
        double f = 1.0;
        if (wavelen > long_wavelen) {
            f = s.factor;
        } else if (wavelen >= short_wavelen) {
            const double smooth = (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
            f = 1.0 / ((1.0 - smooth) / s.factor + smooth);
        }
        out.push_back(float(f));
    }
    return out;
}

}  // namespace hetero
