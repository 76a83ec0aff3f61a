// Block encoders that choose each block's scales for the least squared
// error, for the types where the choice matters: the K-quants and IQ4_NL.
// The SDK's encoders (sdk/quant*.hpp) take each sub-block's scale from its
// extremes, which is what the 32-value Q4_0 .. Q8_0 types are defined by,
// but wastes levels on the K-quants' few-bit grids; hetero quantize and
// hetero convert hf write their files through these.
#pragma once

#include <cstdint>

namespace hetero::model_detail {

// n values (a multiple of the type's block) encoded as `dtype`
// (hetero_dtype). K-quants and IQ4_NL: the scales of least squared error
// among candidates around the extremes' scale; every other dtype as
// sdk::row_from_f32 encodes it.
void encode_row_best(uint32_t dtype, const float* x, void* dst, int64_t n);

}  // namespace hetero::model_detail
