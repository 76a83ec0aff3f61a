#include "block_scales.hpp"

#include <hetero/ep_api.h>
#include <hetero/sdk/quant.hpp>  // with the Q2_K/Q3_K, Q4_1/Q5_x/IQ4_NL and E0M4 blocks

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace hetero::model_detail {

namespace {

// Where a block type keeps its f16 scales.
struct ScaleLayout {
    uint64_t block_bytes = 0;
    int count = 0;  // 0: no f16 scales
    size_t offset[2] = {};
    const char* field[2] = {};
};

template <class Block>
ScaleLayout one_scale(size_t d) {
    return {sizeof(Block), 1, {d, 0}, {"d", ""}};
}

template <class Block>
ScaleLayout two_scales(size_t d, size_t m, const char* m_name) {
    return {sizeof(Block), 2, {d, m}, {"d", m_name}};
}

ScaleLayout layout_of(uint32_t dtype) {
    using namespace sdk;
    switch (dtype) {
        case HETERO_DTYPE_Q8_0: return one_scale<BlockQ8_0>(offsetof(BlockQ8_0, d));
        case HETERO_DTYPE_Q4_0: return one_scale<BlockQ4_0>(offsetof(BlockQ4_0, d));
        case HETERO_DTYPE_Q5_0: return one_scale<BlockQ5_0>(offsetof(BlockQ5_0, d));
        case HETERO_DTYPE_IQ4_NL: return one_scale<BlockIQ4_NL>(offsetof(BlockIQ4_NL, d));
        case HETERO_DTYPE_Q4_1: return two_scales<BlockQ4_1>(offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m), "m");
        case HETERO_DTYPE_Q5_1: return two_scales<BlockQ5_1>(offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m), "m");
        case HETERO_DTYPE_Q4_K: return two_scales<BlockQ4K>(offsetof(BlockQ4K, d), offsetof(BlockQ4K, dmin), "dmin");
        case HETERO_DTYPE_Q5_K: return two_scales<BlockQ5K>(offsetof(BlockQ5K, d), offsetof(BlockQ5K, dmin), "dmin");
        case HETERO_DTYPE_Q2_K: return two_scales<BlockQ2K>(offsetof(BlockQ2K, d), offsetof(BlockQ2K, dmin), "dmin");
        case HETERO_DTYPE_Q6_K: return one_scale<BlockQ6K>(offsetof(BlockQ6K, d));
        case HETERO_DTYPE_Q3_K: return one_scale<BlockQ3K>(offsetof(BlockQ3K, d));
        case HETERO_DTYPE_E0M4: return two_scales<BlockE0M4>(offsetof(BlockE0M4, d), offsetof(BlockE0M4, b), "b");
        default: return {};
    }
}

// An f16 with all exponent bits set is Inf or NaN.
constexpr uint16_t kF16Exponent = 0x7c00;

uint16_t load_f16(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return h;
}

// Whether any block in [begin, end) has a non-finite scale at `offset`.
// Branch-free over the range so the loop stays a plain strided scan.
bool any_non_finite(const uint8_t* data, uint64_t block_bytes, size_t offset, uint64_t begin, uint64_t end) {
    uint16_t seen = 0;
    for (uint64_t b = begin; b < end; ++b) {
        const uint16_t e = load_f16(data + b * block_bytes + offset) & kF16Exponent;
        seen |= uint16_t(e == kF16Exponent);
    }
    return seen != 0;
}

}  // namespace

bool scales_bound_values(uint32_t dtype) { return layout_of(dtype).count > 0; }

std::optional<BadScale> first_non_finite_scale(uint32_t dtype, const uint8_t* data, uint64_t bytes) {
    const ScaleLayout l = layout_of(dtype);
    if (l.count == 0 || !data) return std::nullopt;
    const uint64_t blocks = bytes / l.block_bytes;
    // Chunks keep the common case one pass; only a failing chunk is searched again.
    constexpr uint64_t kChunk = 4096;
    for (uint64_t begin = 0; begin < blocks; begin += kChunk) {
        const uint64_t end = std::min(blocks, begin + kChunk);
        bool bad = false;
        for (int s = 0; s < l.count; ++s) bad = bad || any_non_finite(data, l.block_bytes, l.offset[s], begin, end);
        if (!bad) continue;
        for (uint64_t b = begin; b < end; ++b)
            for (int s = 0; s < l.count; ++s) {
                const uint16_t h = load_f16(data + b * l.block_bytes + l.offset[s]);
                if ((h & kF16Exponent) == kF16Exponent) return BadScale{b, blocks, sdk::f16_to_f32(h), l.field[s]};
            }
    }
    return std::nullopt;
}

}  // namespace hetero::model_detail
