/* The bit layout of the 6-bit scales and mins of a Q4_K / Q5_K super-block,
   written once for every language that unpacks them: C++ (the SDK, the core
   and the CPU provider, through quant_k_scales.hpp), OpenCL C (the OpenCL
   provider embeds this file ahead of its kernels) and GLSL (the Vulkan
   provider's shaders #include it). Hence macros over plain operators.

   The 12 scale bytes are A = s[0..3], B = s[4..7], C = s[8..11]; sub-block j
   (0..7) reads a = A[j % 4], b = B[j % 4], c = C[j % 4]. Sub-blocks 0-3 keep
   their scale in the low 6 bits of a and their min in those of b; 4-7 take
   their low 4 bits from c (scale: low nibble, min: high nibble) and their top
   2 bits from the top bits of a (scale) and b (min). The operands are
   unsigned: uint, a uint vector of any width (the four sub-blocks of a half
   at once), or bytes widened to unsigned int. */
#ifndef HETERO_SDK_K_SCALE_BITS_H
#define HETERO_SDK_K_SCALE_BITS_H

#define HETERO_KQ_SCALE_LO(a) ((a) & 63u)
#define HETERO_KQ_MIN_LO(b) ((b) & 63u)
#define HETERO_KQ_SCALE_HI(a, c) (((c) & 15u) | (((a) >> 6u) << 4u))
#define HETERO_KQ_MIN_HI(b, c) (((c) >> 4u) | (((b) >> 6u) << 4u))

/* Sub-block j's scale and min, j an unsigned 0..7. */
#define HETERO_KQ_SCALE(a, c, j) ((j) < 4u ? HETERO_KQ_SCALE_LO(a) : HETERO_KQ_SCALE_HI(a, c))
#define HETERO_KQ_MIN(b, c, j) ((j) < 4u ? HETERO_KQ_MIN_LO(b) : HETERO_KQ_MIN_HI(b, c))

#endif
