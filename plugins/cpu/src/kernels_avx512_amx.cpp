// AVX-512 VNNI kernels with AMX tiles for the prefill of packed Q8_0/Q4_0
// weights (kernels_x86_amx.inc); everything else is the avx512-vnni table's.
#define HETERO_X86_AVX512 1
#define HETERO_X86_VNNI 1
#define HETERO_X86_AMX 1
#include "kernels_x86.inc"

namespace hetero::cpu {

const Kernels& kernels_avx512_amx() {
    static constexpr Kernels k = make_table("avx512-amx");  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
