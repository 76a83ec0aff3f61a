// Bit-exact float -> f16 / bf16 with round-to-nearest-even (the hardware
// conversion's rounding mode is implementation-defined in Vulkan).
uint f32_to_f16_bits(float fv) {
    uint x = floatBitsToUint(fv);
    uint sign = (x >> 16) & 0x8000u;
    uint a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
    if (a >= 0x477ff000u) return sign | 0x7c00u;
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return sign;
        uint e = a >> 23;
        uint m = (a & 0x7fffffu) | 0x800000u;
        uint shift = 126u - e;
        uint h = m >> shift;
        uint rem = m & ((1u << shift) - 1u);
        uint mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (h & 1u) != 0u)) ++h;
        return sign | h;
    }
    uint h = (a >> 13) - (112u << 10);
    uint rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;
    return sign | h;
}

uint f32_to_bf16_bits(float fv) {
    uint x = floatBitsToUint(fv);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
    x += 0x7fffu + ((x >> 16) & 1u);
    return x >> 16;
}

// Correctly rounded a / b (GLSL division may be off by 2.5 ulp).
float div_rn(float a, float b) {
    precise float y = 1.0 / b;
    precise float q = a * y;
    precise float r = fma(-q, b, a);
    precise float res = fma(r, y, q);
    return res;
}
