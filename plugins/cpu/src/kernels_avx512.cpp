// AVX-512 F/BW/VL/DQ kernels: 512-bit float paths and 32 registers for larger
// tiles; int8 dot products through maddubs (for CPUs without VNNI).
#define HETERO_X86_AVX512 1
#include "kernels_x86.inc"

namespace hetero::cpu {

const Kernels& kernels_avx512() {
    static constexpr Kernels k = make_table("avx512");  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
