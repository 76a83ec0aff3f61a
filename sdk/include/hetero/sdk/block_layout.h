/* GGUF's block formats as every language that reads them needs them: the
   block sizes, and the bit layout of the 6-bit scales and mins of a Q4_K /
   Q5_K super-block. Written once for C++ (the SDK's block structs are checked
   against it; quant_k_scales.hpp unpacks through it for the SDK, the core and
   the CPU provider), OpenCL C (the OpenCL provider embeds this file ahead of
   its kernels) and GLSL (the Vulkan provider's shaders #include it). Hence
   macros over plain literals and operators.

   Elements per block and bytes per block (plain int literals: GLSL code
   converts them where it computes in uint). */
#ifndef HETERO_SDK_BLOCK_LAYOUT_H
#define HETERO_SDK_BLOCK_LAYOUT_H

#define HETERO_QK 32    /* Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, E0M4 */
#define HETERO_QK_K 256 /* the K-quants' super-blocks */
#define HETERO_Q4_0_BYTES 18
#define HETERO_Q4_1_BYTES 20
#define HETERO_Q5_0_BYTES 22
#define HETERO_Q5_1_BYTES 24
#define HETERO_Q8_0_BYTES 34
#define HETERO_IQ4_NL_BYTES 18
#define HETERO_Q2_K_BYTES 84
#define HETERO_Q3_K_BYTES 110
#define HETERO_Q4_K_BYTES 144
#define HETERO_Q5_K_BYTES 176
#define HETERO_Q6_K_BYTES 210
#define HETERO_E0M4_BYTES 20

/* E0M4's 4-bit code q is the top four fraction bits of a float in [2, 4):
   the f32 with bits HETERO_E0M4_F32_BITS | q << HETERO_E0M4_F32_SHIFT is
   2 + q / 8 (f16: HETERO_E0M4_F16_BITS | q << HETERO_E0M4_F16_SHIFT). */
#define HETERO_E0M4_F32_BITS 0x40000000u
#define HETERO_E0M4_F32_SHIFT 19u
#define HETERO_E0M4_F16_BITS 0x4000u
#define HETERO_E0M4_F16_SHIFT 6u

/* The 12 scale bytes are A = s[0..3], B = s[4..7], C = s[8..11]; sub-block j
   (0..7) reads a = A[j % 4], b = B[j % 4], c = C[j % 4]. Sub-blocks 0-3 keep
   their scale in the low 6 bits of a and their min in those of b; 4-7 take
   their low 4 bits from c (scale: low nibble, min: high nibble) and their top
   2 bits from the top bits of a (scale) and b (min). The operands are
   unsigned: uint, a uint vector of any width (the four sub-blocks of a half
   at once), or bytes widened to unsigned int. */

#define HETERO_KQ_SCALE_LO(a) ((a) & 63u)
#define HETERO_KQ_MIN_LO(b) ((b) & 63u)
#define HETERO_KQ_SCALE_HI(a, c) (((c) & 15u) | (((a) >> 6u) << 4u))
#define HETERO_KQ_MIN_HI(b, c) (((c) >> 4u) | (((b) >> 6u) << 4u))

/* Sub-block j's scale and min, j an unsigned 0..7. */
#define HETERO_KQ_SCALE(a, c, j) ((j) < 4u ? HETERO_KQ_SCALE_LO(a) : HETERO_KQ_SCALE_HI(a, c))
#define HETERO_KQ_MIN(b, c, j) ((j) < 4u ? HETERO_KQ_MIN_LO(b) : HETERO_KQ_MIN_HI(b, c))

#endif
