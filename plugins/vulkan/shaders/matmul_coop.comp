#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// out[n, m] = dot(x[n, :], W[m, :]) (+ bias[m]) for many tokens (prefill) on
// tensor cores: a workgroup of 4 subgroups (of 32) computes a 64 x 64 tile of
// the output, each subgroup 32 x 32 as 2 x 2 cooperative 16 x 16 f32
// accumulators. Per step of BK = 32 (one quantization block) W's tile is
// dequantized to f16 in shared memory and x's tile converted to f16 next to
// it; edge tiles are zero-padded and the result goes out through shared
// memory so any N and M work. Used only where the device reports 16x16x16
// f16 x f16 + f32 subgroup matrices and a subgroup size of 32.
// WTYPE: 3 (Q8_0) or 4 (Q4_0). u[0] = N, u[1] = M, u[2] = K (multiple of 32), u[3] = 1: add bias[m], 2: add a residual [N, M] (a fused ADD).
#include "common.glsl"
layout(local_size_x = 128) in;
const uint BM = 64, BN = 64, BK = 32;
const uint LDS = BK + 8;  // f16 row stride: rows stay 16-byte aligned, banks shift
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 2) readonly buffer Wt { uint ww[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
shared float16_t ws[BM * LDS];  // W tile, row m, column k
shared float16_t xs[BN * LDS];  // x tile, row n, column k
shared float cs[4 * 256];       // one 16 x 16 accumulator per subgroup on its way out

uint w_u16(uint byte_off) { return (ww[byte_off >> 2] >> ((byte_off & 2u) * 8u)) & 0xffffu; }

void main() {
    uint N = pc.u[0], M = pc.u[1], K = pc.u[2];
    uint m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN;
    uint t = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wn = (sg >> 1) * 32u, wm = (sg & 1u) * 32u;  // this subgroup's 32 x 32 corner
    uint xb = pc.t0 >> 2;
    uint wbase = pc.t1;
    uint nb = K / 32u;
    // Loader roles: two invocations per tile row, 16 k each.
    uint lr = t >> 1, lh = t & 1u;

    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2][2];
    for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 2u; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    for (uint kb = 0u; kb < nb; ++kb) {
        uint m = m0 + lr;
        uint wrow = lr * LDS;
        if (m < M) {
#if WTYPE == 4
            // Half lh of the block: bytes 8lh..8lh+7 hold elements 8lh+i (low
            // nibble) and 16+8lh+i (high nibble).
            uint blk = wbase + (m * nb + kb) * 18u;
            float16_t d = float16_t(unpackHalf2x16(w_u16(blk)).x);
            for (uint i = 0u; i < 8u; i += 2u) {
                uint v = w_u16(blk + 2u + lh * 8u + i);
                ws[wrow + lh * 8u + i] = d * float16_t(int(v & 15u) - 8);
                ws[wrow + lh * 8u + i + 1u] = d * float16_t(int((v >> 8) & 15u) - 8);
                ws[wrow + 16u + lh * 8u + i] = d * float16_t(int((v >> 4) & 15u) - 8);
                ws[wrow + 16u + lh * 8u + i + 1u] = d * float16_t(int(v >> 12) - 8);
            }
#else
            uint blk = wbase + (m * nb + kb) * 34u;
            float16_t d = float16_t(unpackHalf2x16(w_u16(blk)).x);
            for (uint i = 0u; i < 16u; i += 2u) {
                uint v = w_u16(blk + 2u + lh * 16u + i);
                ws[wrow + lh * 16u + i] = d * float16_t(int(v << 24) >> 24);
                ws[wrow + lh * 16u + i + 1u] = d * float16_t(int(v << 16) >> 24);
            }
#endif
        } else {
            for (uint i = 0u; i < 16u; ++i) ws[wrow + lh * 16u + i] = float16_t(0.0);
        }
        uint n = n0 + lr;
        uint xrow = lr * LDS + lh * 16u;
        if (n < N) {
            uint e = xb + n * K + kb * 32u + lh * 16u;
            for (uint i = 0u; i < 16u; i += 4u) {
                vec4 v = (xb & 3u) == 0u ? x4[(e + i) >> 2] : vec4(x[e + i], x[e + i + 1u], x[e + i + 2u], x[e + i + 3u]);
                xs[xrow + i] = float16_t(v.x);
                xs[xrow + i + 1u] = float16_t(v.y);
                xs[xrow + i + 2u] = float16_t(v.z);
                xs[xrow + i + 3u] = float16_t(v.w);
            }
        } else {
            for (uint i = 0u; i < 16u; ++i) xs[xrow + i] = float16_t(0.0);
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk += 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[2], b[2];
            for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], xs, (wn + 16u * i) * LDS + kk, LDS, false);
            // B = W^T (k x m) is W's tile read column-major.
            for (uint j = 0u; j < 2u; ++j) coopMatLoadNV(b[j], ws, (wm + 16u * j) * LDS + kk, LDS, true);
            for (uint i = 0u; i < 2u; ++i)
                for (uint j = 0u; j < 2u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
        barrier();
    }

    uint ob = pc.t4 >> 2;
    for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 2u; ++j) {
            coopMatStoreNV(acc[i][j], cs, sg * 256u, 16u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256u; e += gl_SubgroupSize) {
                uint n = n0 + wn + 16u * i + e / 16u, m = m0 + wm + 16u * j + e % 16u;
                if (n < N && m < M) {
                    float v = cs[sg * 256u + e];
                    if (pc.u[3] != 0u) v += bias[(pc.t2 >> 2) + (pc.u[3] == 2u ? n * M : 0u) + m];
                    o[ob + n * M + m] = v;
                }
            }
            subgroupBarrier();
        }
}
