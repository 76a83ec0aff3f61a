// Which layout of its weights each matmul launch reads (planar_weights.hpp):
// Q4_0/Q8_0 constants rewritten in the planar layout, planar copies or
// 16-byte aligned Q6_K copies for the decode kernels, K-quants read in
// place by the planar kernels' int8 form, or the GGUF layout as it is.
#include "cl_buffer.hpp"
#include "cl_lowering.hpp"
#include "cl_matmul_kernels.hpp"

#include <algorithm>

namespace hetero::opencl {

bool Lowering::planar_x_fits(int64_t K) const {
    return planar_weights_enabled() && planar_local_floats(K, 256) * sizeof(float) <= device_.info().local_mem;
}

bool Lowering::planar_kernel_fits(const MatmulLaunch& mm, uint32_t dtype, int64_t K, size_t wg_cap) const {
    return planar_x_fits(K) &&
           program_.group_size(quant_matvec_kernel(dtype, mm.swiglu, mm.norm_weight >= 0, true).c_str(), wg_cap) >= kPlanarLanes;
}

bool Lowering::planar_layout_fits(uint32_t dtype, int64_t K) const {
    if (!planar_x_fits(K)) return false;
    // Every launch shape of the decode kernels, so that any use of the
    // weights can take the layout.
    for (const bool swiglu : {false, true})
        for (const bool norm : {false, true})
            for (const bool rope : {false, true})
                if (!(rope && (swiglu || !norm)) &&
                    program_.group_size(quant_matvec_kernel(dtype, swiglu, norm, true, rope).c_str(), kPlanarLanes) < kPlanarLanes)
                    return false;
    return true;
}

bool Lowering::planar_eligible(int32_t w) const {
    const hetero_tensor_desc& t = graph_.tensors[size_t(w)];
    if (t.kind != HETERO_TENSOR_CONSTANT || (t.dtype != HETERO_DTYPE_Q4_0 && t.dtype != HETERO_DTYPE_Q8_0)) return false;
    const sdk::BoundTensor& c = constants_[size_t(w)];
    // Device memory only (imported host pages may be the model file's,
    // read-only), and 16-byte aligned for the kernels' vector loads.
    return !cl_buffer(c.buffer).host() && c.offset % 16 == 0 && planar_layout_fits(t.dtype, sdk::row_width(t));
}

bool Lowering::planar_constants(const int32_t* ws, int count) {
    for (int i = 0; i < count; ++i)
        if (!planar_eligible(ws[i])) return false;
    const auto& T = graph_.tensors;
    for (int i = 0; i < count; ++i) {
        const hetero_tensor_desc& t = T[size_t(ws[i])];
        const sdk::BoundTensor& c = constants_[size_t(ws[i])];
        const int64_t K = sdk::row_width(t), M = int64_t(sdk::element_count(t) / uint64_t(K));
        if (!rewrite_planar(*static_cast<ClBuffer*>(c.buffer), device_.context(), device_.queue(), program_.get(), c.offset, t.dtype, M, K))
            tensor_error(t, ws[i], " is bound over part of weights this provider rewrote in its planar layout");
        planar_reads_.insert(std::upper_bound(planar_reads_.begin(), planar_reads_.end(), ws[i]), ws[i]);
    }
    return count > 0;
}

bool Lowering::int8_kquant_matvec(const MatmulLaunch& mm, int64_t K, size_t wg_cap) const {
    const auto& T = graph_.tensors;
    const uint32_t dtype = T[size_t(mm.w[0])].dtype;
    if ((dtype != HETERO_DTYPE_Q4_K && dtype != HETERO_DTYPE_Q5_K) || !planar_kernel_fits(mm, dtype, K, wg_cap)) return false;
    // The kernels load whole 16-byte block headers: constants starting on a
    // 16-byte boundary only (super-blocks are 144 or 176 bytes, so every one
    // then does).
    for (int i = 0; i < mm.count; ++i)
        if (T[size_t(mm.w[i])].kind != HETERO_TENSOR_CONSTANT || constants_[size_t(mm.w[i])].offset % 16 != 0) return false;
    return true;
}

std::vector<std::shared_ptr<const PlanarWeights>> Lowering::planar_copies(const MatmulLaunch& mm, int64_t K, size_t wg_cap) {
    const uint32_t dtype = graph_.tensors[size_t(mm.w[0])].dtype;
    if ((dtype != HETERO_DTYPE_Q4_0 && dtype != HETERO_DTYPE_Q8_0 && dtype != HETERO_DTYPE_Q6_K) || !planar_kernel_fits(mm, dtype, K, wg_cap))
        return {};
    return weight_copies(mm, K);
}

std::vector<std::shared_ptr<const PlanarWeights>> Lowering::weight_copies(const MatmulLaunch& mm, int64_t K) {
    const auto& T = graph_.tensors;
    const uint32_t dtype = T[size_t(mm.w[0])].dtype;
    for (int i = 0; i < mm.count; ++i)
        if (T[size_t(mm.w[i])].kind != HETERO_TENSOR_CONSTANT) return {};
    std::vector<std::shared_ptr<const PlanarWeights>> copies;
    for (int i = 0; i < mm.count; ++i) {
        const sdk::BoundTensor& c = constants_[size_t(mm.w[i])];
        const ClBuffer& b = cl_buffer(c.buffer);
        copies.push_back(device_.planar_weights().get(device_.context(), device_.queue(), program_.get(), device_.info().max_alloc,
                                                      device_.info().global_mem, b.mem(), b.base() + c.offset, dtype,
                                                      T[size_t(mm.w[i])].shape[0], K));
        if (!copies.back()) return {};
    }
    planar_.insert(planar_.end(), copies.begin(), copies.end());
    return copies;
}

}  // namespace hetero::opencl
