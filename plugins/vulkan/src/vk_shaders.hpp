// The embedded SPIR-V modules (generated at build time from ../shaders).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hetero::vk {

#define HETERO_VK_SHADERS(X) \
    X(elementwise) X(elementwise_h) X(rmsnorm) X(rmsnorm_sg) X(rmsnorm_h) X(rmsnorm_sg_h) X(softmax) X(rope) X(rope_scaled) X(rope_scaled_pair) X(rope_scaled_pair_store) \
    X(rope_pair) X(rope_pair_store) X(embedding) X(to_f32) X(from_f32_half) X(from_f32_quant) X(store_rows) \
    X(store_rows_pair) X(attention) X(attention_basic) X(attention_merge) X(attention_tiled) X(attention_coop) \
    X(attention_coop_h) X(matmul_w0) X(matmul_w1) X(matmul_w2) X(matmul_w3) X(matmul_w4) X(matvec_w0) \
    X(matvec_w1) X(matvec_w2) X(matvec_w3) X(matvec_w4) X(matvec_sg_w0) X(matvec_sg_w1) X(matvec_sg_w2) \
    X(matvec_sg_w3) X(matvec_sg_w4) X(matmul_coop_w3) X(matmul_coop_w4) X(matmul_coop_multi_w3) \
    X(matmul_coop_multi_w4) X(matmul_coop_xh_w3) X(matmul_coop_xh_w4) X(matmul_coop_multi_xh_w3) \
    X(matmul_coop_multi_xh_w4) X(matvec_multi_w3) X(matvec_multi_w4) X(matvec_multi_sg_w3) \
    X(matvec_multi_sg_w4) X(matvec_multi_norm_sg_w3) X(matvec_multi_norm_sg_w4) X(matvec_multi_swiglu_w3) \
    X(matvec_multi_swiglu_w4) X(matvec_multi_swiglu_sg_w3) X(matvec_multi_swiglu_sg_w4) \
    X(matvec_multi_norm_swiglu_sg_w3) X(matvec_multi_norm_swiglu_sg_w4) X(matmul_w7) X(matmul_w8) X(matmul_w9) \
    X(matvec_w7) X(matvec_w8) X(matvec_w9) X(matvec_sg_w7) X(matvec_sg_w8) X(matvec_sg_w9) \
    X(matvec_multi_w7) X(matvec_multi_w8) X(matvec_multi_w9) X(matvec_multi_sg_w7) X(matvec_multi_sg_w8) \
    X(matvec_multi_sg_w9) X(matvec_multi_norm_sg_w7) X(matvec_multi_norm_sg_w8) X(matvec_multi_norm_sg_w9) \
    X(matvec_multi_swiglu_w7) X(matvec_multi_swiglu_w8) X(matvec_multi_swiglu_w9) X(matvec_multi_swiglu_sg_w7) \
    X(matvec_multi_swiglu_sg_w8) X(matvec_multi_swiglu_sg_w9) X(matvec_multi_norm_swiglu_sg_w7) \
    X(matvec_multi_norm_swiglu_sg_w8) X(matvec_multi_norm_swiglu_sg_w9) X(matmul_coop_w7) X(matmul_coop_w8) X(matmul_coop_w9) \
    X(matmul_coop_multi_w7) X(matmul_coop_multi_w8) X(matmul_coop_multi_w9) X(matmul_coop_xh_w7) X(matmul_coop_xh_w8) \
    X(matmul_coop_xh_w9) X(matmul_coop_multi_xh_w7) X(matmul_coop_multi_xh_w8) X(matmul_coop_multi_xh_w9) \
    HETERO_VK_WEIGHT_SHADERS(X, w10) HETERO_VK_WEIGHT_SHADERS(X, w11) HETERO_VK_WEIGHT_SHADERS(X, w12) \
    HETERO_VK_WEIGHT_SHADERS(X, w13) HETERO_VK_WEIGHT_SHADERS(X, w14) HETERO_VK_WEIGHT_SHADERS(X, w15) \
    HETERO_VK_WEIGHT_SHADERS(X, w16)

// The GEMM and matvec forms of a weight type that has no coopmat GEMM (Q4_1,
// Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K: w10 .. w15; E0M4: w16).
#define HETERO_VK_WEIGHT_SHADERS(X, W)                                                                                   \
    X(matmul_##W) X(matvec_##W) X(matvec_sg_##W) X(matvec_multi_##W) X(matvec_multi_sg_##W) X(matvec_multi_norm_sg_##W) \
        X(matvec_multi_swiglu_##W) X(matvec_multi_swiglu_sg_##W) X(matvec_multi_norm_swiglu_sg_##W)

struct ShaderCode {
    const uint32_t* words;
    size_t count;
};

// The module named `name`; throws when none is embedded under that name.
ShaderCode shader_code(std::string_view name);

}  // namespace hetero::vk
