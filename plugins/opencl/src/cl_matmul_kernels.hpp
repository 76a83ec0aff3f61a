// The matmul kernel family: the names of its variants (kernels/matvec.cl,
// matvec_planar.cl, gemm.cl, gemm_mma.cl, kquant.cl, quant_other.cl) and the
// work-group geometry of the planar matvec kernels.
#pragma once

#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hetero::opencl {

// A dtype as kernel names spell it: f32, q8_0, q4_k, iq4_nl, ... (sdk's
// name, lower case).
inline std::string kernel_dtype(uint32_t dtype) {
    std::string s = sdk::dtype_name(dtype);
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// matvec_<type> (kernels/matvec.cl, kquant.cl, quant_other.cl).
inline std::string matvec_kernel(uint32_t dtype) { return "matvec_" + kernel_dtype(dtype); }

// gemm_[planar_]<type>, and on tensor cores gemm_mma_[planar_]<type>; planar
// for Q4_0/Q8_0 rewritten in the planar layout.
inline std::string gemm_kernel(uint32_t dtype, bool planar) { return std::string("gemm_") + (planar ? "planar_" : "") + kernel_dtype(dtype); }

inline std::string mma_gemm_kernel(uint32_t dtype, bool planar) {
    return std::string("gemm_mma_") + (planar ? "planar_" : "") + kernel_dtype(dtype);
}

// matvec_[swiglu_][norm_][planar_][rope_]<type> for fused_weight_type types.
inline std::string quant_matvec_kernel(uint32_t dtype, bool swiglu, bool norm, bool planar, bool rope = false) {
    return std::string("matvec_") + (swiglu ? "swiglu_" : "") + (norm ? "norm_" : "") + (planar ? "planar_" : "") + (rope ? "rope_" : "") +
           kernel_dtype(dtype);
}

// Rows per tile of the planar matvec kernels (gate and up rows each with
// SwiGLU) and the work-items that share a tile (PQ_ROWS and PQ_LANES of
// kernels/matvec_planar.cl).
inline constexpr int64_t kPlanarRows = 2;
inline constexpr size_t kPlanarLanes = 32;

// Local memory (in floats) of a planar matvec work-group of `wg` items over
// rows of width k: x as int8, its steps and block sums (each padded to 4),
// two arrays of k / 8, the lanes' reduction space and 16 bytes to align the
// whole to 16 (the layout in kernels/matvec_planar.cl).
inline size_t planar_local_floats(int64_t k, size_t wg) {
    return size_t(k / 4 + 2 * ((k / 32 + 3) & ~int64_t(3)) + k / 4) + wg * 2 * size_t(kPlanarRows) + 4;
}

// Largest planar work-group (of up to `cap` items) that still gives every
// compute unit a group: larger groups quantize x fewer times, more groups
// keep more loads in flight.
inline size_t planar_group_size(size_t tiles, size_t cap, uint32_t compute_units) {
    size_t wg = std::max(cap, kPlanarLanes);
    while (wg > 2 * kPlanarLanes && (tiles * kPlanarLanes + wg - 1) / wg < size_t(compute_units)) wg /= 2;
    return wg;
}

}  // namespace hetero::opencl
