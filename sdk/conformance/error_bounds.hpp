// How far a correct provider's result may lie from the reference, element by
// element. Each op adds its own rounding allowance (what a correct f32 kernel,
// an f16/bf16 weight path or Q8_0 activation quantization can introduce) to
// the first-order propagation of its inputs' bounds, so chains of ops get
// bounds that follow the data rather than one loose global tolerance.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <vector>

namespace hetero::conformance {

// Values of a float or quantized tensor as f32 (empty for i32/i8).
std::vector<float> decode_tensor(const hetero_tensor_desc& t, const uint8_t* data);

// Per tensor, per element: the largest |provider - reference| allowed. Bound
// and constant inputs start at 0 (so do a cache's rows nobody writes).
// `ref_data` holds the reference's contents of every tensor after the graph ran.
// `int8_matmul`: the device computes matmuls W8A8 (int8 weights per output
// row or per tensor, int8 activations with one scale per tensor; a device of
// kind NPU listing HETERO_DTYPE_I8 in dtype_mask): matmul outputs may carry
// the worst case of both roundings instead of the float allowances.
std::vector<std::vector<double>> error_bounds(const hetero_graph& graph, const uint8_t* const* ref_data, bool int8_matmul = false);

// Allowances, exposed so tests and messages can name them.
namespace allowance {
inline constexpr double kAbs = 1e-6;              // absolute floor for transcendental / reduction ops
inline constexpr double kRoundF32 = 1.2e-7;       // one f32 rounding (2^-23)
inline constexpr double kRmsnormRel = 1e-5;
inline constexpr double kSwigluRel = 2e-5;        // exp approximations
inline constexpr double kSoftmaxRel = 2e-5;
inline constexpr double kRopeRel = 2e-6;
inline constexpr double kRopeAngleRel = 1e-5;     // angle pos*theta computed in f32 (incl. repeated products)
inline constexpr double kAttentionRelF32 = 1e-4;  // of max |v| over the attended rows
inline constexpr double kAttentionRelF16 = 1e-3;  // f16 caches: kernels may keep q or p in f16
inline constexpr double kAttentionQF16 = 0x1p-11; // f16 caches: q rounded to f16 (unit roundoff), in the scores
inline constexpr double kMatmulAccum = 4e-7;      // * sqrt(K) * sum|x w|: f32 accumulation order
inline constexpr double kMatmulF16 = 0x1p-10;     // x may be rounded to f16 (unit roundoff 2^-11, doubled)
inline constexpr double kMatmulBF16 = 0x1p-7;     // x may be rounded to bf16 (unit roundoff 2^-8, doubled)
inline constexpr double kMatmulQScale = 0x1p-10;  // Q8_0 activation scale stored as f16
inline constexpr double kMatmulQSigmas = 6.0;     // Q8_0 activation rounding: independent, uniform +-d/2
}  // namespace allowance

}  // namespace hetero::conformance
