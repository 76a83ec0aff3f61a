// AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c; chosen only
// after the CPU reported those features).
#include "kernels_x86.inc"

namespace hetero::cpu {

const Kernels& kernels_avx2() {
    static constexpr Kernels k = make_table("avx2");  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
