// Llama 3's RoPE frequency factors: low frequencies (long wavelengths) are
// slowed by `factor`, high ones kept, and the band between blended, relative
// to the context the model was first trained on.
#pragma once

#include <cstdint>
#include <vector>

namespace hetero {

struct Llama3RopeScaling {
    double factor = 8.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    double original_context = 8192.0;
};

// One divisor per rotated pair (rot_dims / 2 of them) for base `base`.
std::vector<float> llama3_rope_factors(const Llama3RopeScaling& s, double base, int64_t rot_dims);

}  // namespace hetero
