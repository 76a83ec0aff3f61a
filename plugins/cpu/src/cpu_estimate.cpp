#include "cpu_estimate.hpp"

#include "cpu_info.hpp"

#include <hetero/sdk/roofline.hpp>

#include <cstring>

namespace hetero::cpu {
namespace {

// What the matmul kernels reach, as fractions of the props' hints: compute
// against peak_gflops (the table's f32 FMA rate, flops_per_cycle x clock x
// threads; int8 dot products beat it, hence factors above 1), separately for
// one or a few activation rows (N < 4: the decode tiles) and for GEMM tiles;
// weight streaming against peak_bandwidth_gbs.
//
// Measured with bench_op_estimates (bench/op_estimates.cpp) on the 2-core
// AMD EPYC (Zen 5) VM of BENCHMARKS.md, 2026-11-24, M = K = 2048, N = 1 with
// the weights cycling through 512 MiB, N = 16 and 128; peak hints 332
// GFLOP/s (AVX-512 tables), 166 (AVX2), 20.8 (scalar), bandwidth 50 GB/s.
// GFLOP/s reached at N = 1 / N = 16..128, and weight GB/s at N = 1:
//   avx512-vnni, packed: Q4_0 157 / 1,230-1,270, 44 GB/s; Q8_0 93 / 1,190-1,210, 50 GB/s;
//                        F16 37 / 446-460, 37 GB/s; F32 25 / 255-273, 49 GB/s
//   avx512 (no VNNI):    Q4_0 61 / 221, Q8_0 34 / 256 (compute-bound at N = 1)
//   avx2:                Q4_0 64 / 213-219, Q8_0 34 / 236-243, F16 35 / 188-198 (36 GB/s),
//                        F32 32 / 172-179
//   scalar:              Q4_0 12.5 / 12.7, Q8_0 32 / 29-34, F16 2.9 / 9-10, F32 8.5 / 10.5
// NEON was not measured: it borrows the AVX2 factors. Unpacked VNNI (option
// pack_weights=0) borrows the AVX-512 ones. Packed K-quants (bench_cpu_matmul,
// same VM, 2026-11-26, one thread, M = 2048, K = 2048 and 8192): Q4_K runs as
// Q4_0 (7.4 / 7.2 ms at N = 512, 75 / 72 us at N = 1); Q6_K at N = 512 takes
// 1.5x Q4_0's time and streams 21-23 GB/s at N = 1 (unpacking its 6-bit
// quants costs compute there).
struct MatmulFactors {
    double few_rows;  // compute, N < 4
    double gemm;      // compute, N >= 4
    double stream;    // weight bandwidth
};

bool is(const Kernels& k, const char* name) { return std::strcmp(k.name, name) == 0; }
bool is_avx512(const Kernels& k) { return is(k, "avx512") || is(k, "avx512-vnni"); }

MatmulFactors matmul_factors(const Kernels& k, bool packed, uint32_t wtype) {
    const bool q4 = wtype == HETERO_DTYPE_Q4_0, q8 = wtype == HETERO_DTYPE_Q8_0, f32 = wtype == HETERO_DTYPE_F32;
    const bool vnni_packed = packed && is(k, "avx512-vnni");
    if (vnni_packed && wtype == HETERO_DTYPE_Q4_K) return {0.47, 3.7, 0.9};
    if (vnni_packed && wtype == HETERO_DTYPE_Q6_K) return {0.3, 2.4, 0.6};
    if (is(k, "scalar")) {
        if (q4) return {0.6, 0.6, 1.0};
        if (q8) return {1.5, 1.5, 1.0};
        if (f32) return {0.4, 0.5, 1.0};
        return {0.14, 0.45, 1.0};  // F16, BF16
    }
    if (is_avx512(k)) {
        if (q4) return vnni_packed ? MatmulFactors{0.47, 3.7, 0.9} : MatmulFactors{0.18, 0.67, 0.9};
        if (q8) return vnni_packed ? MatmulFactors{0.35, 3.6, 1.0} : MatmulFactors{0.10, 0.77, 1.0};
        if (f32) return {0.2, 0.8, 1.0};
        return {0.2, 1.35, 0.74};  // F16, BF16
    }
    // avx2, and neon by proxy.
    if (q4) return {0.38, 1.3, 0.9};
    if (q8) return {0.2, 1.45, 1.0};
    if (f32) return {0.3, 1.05, 1.0};
    return {0.3, 1.15, 0.71};  // F16, BF16
}

// Attention against peak_gflops (same runs; queries attending to 256 rows of
// an f32 or f16 cache, 32 heads of 64): ~45 GFLOP/s with the AVX-512 tables,
// ~34 with AVX2, 18 (f32 cache) and 3.5 (f16 cache) with scalar code.
double attention_factor(const Kernels& k, uint32_t cache_type) {
    if (is(k, "scalar")) return cache_type == HETERO_DTYPE_F16 ? 0.17 : 0.85;
    if (is_avx512(k)) return 0.135;
    return 0.2;
}

// Per-node fixed cost inside an executable: a thread-pool fork and join. The
// same runs put small nodes (a 2048-wide RMSNorm or add) at 0.2-0.7 us.
constexpr double kDispatchSeconds = 1e-6;

}  // namespace

double estimate_seconds(const Kernels& k, bool packed, double peak_gflops, double bandwidth_gbs, const hetero_node& node,
                        const hetero_tensor_desc* tensors) {
    sdk::Roofline r;
    r.peak_gflops = peak_gflops;
    r.bandwidth_gbs = bandwidth_gbs;
    r.dispatch_seconds = kDispatchSeconds;
    // Core-clock cycles per second of all threads (peak / the table's flops per cycle).
    const double cycles = peak_gflops / flops_per_cycle(k);
    switch (node.op) {
        case HETERO_OP_MATMUL: {
            const MatmulFactors f = matmul_factors(k, packed, tensors[node.inputs[1]].dtype);
            r.compute_efficiency = tensors[node.inputs[0]].shape[0] < 4 ? f.few_rows : f.gemm;
            r.bandwidth_efficiency = f.stream;
            break;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: r.compute_efficiency = attention_factor(k, tensors[node.inputs[1]].dtype); break;
        // exp-bound and sin/cos-bound, at the same rate whatever the ISA
        // (scalar libm calls): SwiGLU ~6 GFLOP/s and RoPE ~22 GFLOP/s on the
        // 2 cores at 2.6 GHz above, i.e. 1.2 and 4.2 nominal flops per cycle
        // and thread. Softmax (exp as well) was not measured: as SwiGLU.
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
        case HETERO_OP_SOFTCAP:
        case HETERO_OP_SOFTMAX: r.compute_efficiency = 1.2 * cycles / peak_gflops; break;
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: r.compute_efficiency = 4.2 * cycles / peak_gflops; break;
        // A layer's activations mostly stay in cache: RMSNorm and add over
        // 128 x 2048 moved 58-66 and 176-208 GB/s against the 50 GB/s hint.
        case HETERO_OP_RMSNORM:
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: r.bandwidth_efficiency = 1.5; break;
        default: break;
    }
    return sdk::roofline_seconds(sdk::node_work(node, tensors), r);
}

}  // namespace hetero::cpu
