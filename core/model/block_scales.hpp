// The f16 scales of quantized blocks, checked in every block (private to
// core/model). A NaN or Inf scale makes its whole block non-finite, but the
// int8-activation kernels turn such blocks into finite garbage before the
// logits could show it, so sampling a few blocks is not enough. Reading two
// bytes per block is cheap next to decoding it.
#pragma once

#include <cstdint>
#include <optional>

namespace hetero::model_detail {

// The first block of `bytes` bytes of `dtype` data whose f16 scale (or min
// scale) is NaN or Inf, with that scale's value; nullopt when all are finite
// or `dtype` has no f16 scales (f32, f16, bf16 are checked as values).
struct BadScale {
    uint64_t block = 0;
    uint64_t blocks = 0;
    float value = 0.f;
    const char* field = "";  // "d" (scale) or "dmin" / "m" (min scale)
};
std::optional<BadScale> first_non_finite_scale(uint32_t dtype, const uint8_t* data, uint64_t bytes);

// Whether every value of `dtype` is a small integer times the f16 fields the
// scan above checks (all quantized types): then finite scales mean finite
// values, and decoding the blocks again would find nothing new.
bool scales_bound_values(uint32_t dtype);

}  // namespace hetero::model_detail
