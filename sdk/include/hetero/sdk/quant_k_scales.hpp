// The 6-bit scales and mins of a Q4_K / Q5_K super-block (12 bytes for its
// 8 sub-blocks), the one unpacking of them that the SDK, the core and the
// CPU provider's kernels use.
//
// Internal linkage on purpose: the CPU provider's ISA-specific kernel tables
// (plugins/cpu/src/kernels_x86.inc) include this header, and an inline
// function with external linkage compiled there with AVX-512 flags could be
// the copy the linker keeps for generic code. Standard headers only.
#pragma once

#include <hetero/sdk/block_layout.h>

#include <cstdint>

namespace hetero::sdk {

// Scale and min (6 bits each) of sub-block j (0..7) of a Q4_K/Q5_K block:
// j < 4 keep them in the low 6 bits of bytes j and j + 4; j >= 4 keep their
// low 4 bits in byte j + 4 (scale low nibble, min high nibble) and their top
// 2 bits in the top bits of bytes j - 4 (scale) and j (min).
// The layout itself is block_layout.h, shared with the GPU kernels.
static inline void k_scale_min(const uint8_t* s, int j, int& sc, int& m) {
    const unsigned jj = unsigned(j), a = s[jj & 3u], b = s[(jj & 3u) + 4u], c = s[(jj & 3u) + 8u];
    sc = int(HETERO_KQ_SCALE(a, c, jj));
    m = int(HETERO_KQ_MIN(b, c, jj));
}

}  // namespace hetero::sdk
