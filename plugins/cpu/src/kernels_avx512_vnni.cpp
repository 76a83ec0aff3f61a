// AVX-512 kernels with VNNI: the int8 dot products of the quantized matmuls
// use vpdpbusd.
#define HETERO_X86_AVX512 1
#define HETERO_X86_VNNI 1
#include "kernels_x86.inc"

namespace hetero::cpu {

const Kernels& kernels_avx512_vnni() {
    static constexpr Kernels k = make_table("avx512-vnni");  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
