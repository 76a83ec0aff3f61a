// The parameter lists of the kernels in kernels/*.cl as C++ types, for
// set_args (cl_kernel_args.hpp): one entry per parameter, in order, so a
// call with a value missing, extra or of another type does not compile.
// Keep each list in step with its kernel.
#pragma once

#include "cl_kernel_args.hpp"

#include <cstddef>

namespace hetero::opencl {

template <class A, class B>
struct ConcatParams;
template <class... A, class... B>
struct ConcatParams<KernelParams<A...>, KernelParams<B...>> {
    using type = KernelParams<A..., B...>;
};
template <class A, class B>
using Concat = typename ConcatParams<A, B>::type;

// kernels/elementwise.cl
using EmbeddingParams = KernelParams<Buffer /*table*/, cl_int /*dtype*/, Buffer /*ids*/, Buffer /*y*/, cl_int /*D*/, cl_int /*V*/,
                                     Pointer /*err*/, cl_int /*node*/, cl_ulong /*planar_blocks*/>;
using RmsnormParams = KernelParams<Buffer /*x*/, Buffer /*w*/, Buffer /*y*/, cl_int /*D*/, cl_float /*eps*/, Local /*red*/>;
using RopeParams = KernelParams<Buffer /*x*/, Buffer /*positions*/, Buffer /*y*/, cl_int /*H*/, cl_int /*Hd*/, cl_int /*rot*/,
                                cl_int /*halves*/, cl_float /*base*/>;
// rope_scaled: RopeParams, then these.
using RopeScalingTail = KernelParams<Buffer /*factors*/, cl_int /*has_factors*/, cl_float /*freq_scale*/>;
using RopeStoreParams =
    KernelParams<Buffer /*q*/, Buffer /*positions*/, Buffer /*q rotated*/, Buffer /*k*/, Buffer /*k cache*/, Buffer /*v*/,
                 Buffer /*v cache*/, cl_int /*Hq*/, cl_int /*Hk*/, cl_int /*Hd*/, cl_int /*rot*/, cl_int /*halves*/, cl_float /*base*/,
                 cl_int /*C*/, cl_int /*cache_f16*/, Pointer /*err*/, cl_int /*node*/, Buffer /*factors*/, cl_int /*scaled*/,
                 cl_int /*has_factors*/, cl_float /*freq_scale*/, Buffer /*cache rows*/>;
// swiglu and geglu.
using GatedParams = KernelParams<Buffer /*gate*/, Buffer /*up*/, Buffer /*y*/, cl_ulong /*n*/>;
using SoftcapParams = KernelParams<Buffer /*x*/, Buffer /*y*/, cl_ulong /*n*/, cl_float /*cap*/>;
using BinaryParams = KernelParams<Buffer /*a*/, Buffer /*b*/, Buffer /*y*/, cl_ulong /*n*/, cl_int /*b_period*/, cl_int /*is_mul*/>;
using SoftmaxParams = KernelParams<Buffer /*x*/, Buffer /*y*/, cl_int /*D*/, cl_float /*scale*/, Local /*red*/>;
using StoreRowsParams = KernelParams<Buffer /*rows*/, Buffer /*positions*/, Buffer /*cache*/, cl_int /*D*/, cl_int /*C*/,
                                     cl_int /*cache_f16*/, Pointer /*err*/, cl_int /*node*/>;

// kernels/convert.cl
using ConvertFromF32Params = KernelParams<Buffer /*x*/, cl_int /*dtype*/, Buffer /*y*/, cl_ulong /*n*/>;
using ConvertToF32Params = KernelParams<Buffer /*x*/, cl_int /*dtype*/, Buffer /*y*/, cl_ulong /*n*/, cl_ulong /*planar_blocks*/>;
// quantize_q8_0 and quantize_q4_0.
using QuantizeParams = KernelParams<Buffer /*x*/, Buffer /*y*/, cl_ulong /*nblocks*/>;

// kernels/attention.cl and attention_mma_kernel.cl: q, k, v, positions, out,
// then the shape. The per-row kernel:
using AttentionParams = KernelParams<Buffer, Buffer, Buffer, Buffer, Buffer, cl_int /*H*/, cl_int /*Hkv*/, cl_int /*Hd*/, cl_int /*C*/,
                                     cl_float /*scale*/, cl_int /*kv_f16*/, Pointer /*err*/, cl_int /*node*/, Local /*red*/,
                                     Local /*qs*/, cl_int /*window*/, cl_float /*cap*/, cl_int /*seq_rows*/>;
using AttentionTiledParams =
    KernelParams<Buffer, Buffer, Buffer, Buffer, Buffer, cl_int /*N*/, cl_int /*H*/, cl_int /*Hkv*/, cl_int /*Hd*/, cl_int /*C*/,
                 cl_float /*scale*/, cl_int /*kv_f16*/, Pointer /*err*/, cl_int /*node*/, cl_int /*heads_per_group*/,
                 cl_int /*slices*/, Local /*k_tile*/, Local /*v_tile*/, Local /*partial*/, cl_int /*window*/, cl_float /*cap*/>;
using AttentionMmaParams = KernelParams<Buffer, Buffer, Buffer, Buffer, Buffer, cl_int /*N*/, cl_int /*H*/, cl_int /*Hkv*/,
                                        cl_int /*Hd*/, cl_int /*C*/, cl_float /*scale*/, cl_int /*kv_f16*/, Pointer /*err*/,
                                        cl_int /*node*/, cl_int /*window*/, cl_float /*cap*/>;

// The matmul kernels' operands (MATVEC_ARGS in kernels/matvec.cl, GEMM_ARGS
// in gemm.cl): x, then (w, y, M) per matrix, then the bias.
using MatmulOperands = KernelParams<Buffer /*x*/, Buffer /*w0*/, Buffer /*y0*/, cl_int /*M0*/, Buffer /*w1*/, Buffer /*y1*/,
                                    cl_int /*M1*/, Buffer /*w2*/, Buffer /*y2*/, cl_int /*M2*/, Buffer /*bias*/, cl_int /*has_bias*/>;
// matvec_[swiglu_]<type>: MatmulOperands, then MatvecTail; the norm_
// kernels add MatvecNormTail.
using MatvecTail = KernelParams<cl_int /*K*/, cl_int /*lanes*/, Local /*red*/>;
using MatvecParams = Concat<MatmulOperands, MatvecTail>;
using MatvecNormTail = KernelParams<Buffer /*norm weight*/, cl_float /*eps*/, Local /*xs*/>;
// gemm_[mma_][planar_|aligned_]<type> (kernels/gemm.cl, gemm_mma.cl, kquant.cl,
// quant_other.cl): MatmulOperands, then GemmTail.
using GemmTail = KernelParams<cl_int /*N*/, cl_int /*K*/>;
// stage_x_f16 (kernels/gemm_mma.cl).
using StageXF16Params = KernelParams<Buffer /*x*/, Pointer /*y*/, cl_ulong /*n4*/>;

// The scalars of a planar launch (PlanarParams in kernels/matvec_planar.cl).
struct PlanarParams {
    cl_ulong xoff, w0off, y0off, w1off, y1off, w2off, y2off, boff, nwoff, poff, b1off, b2off;
    cl_int M0, M1, M2, has_bias, K, Hd, rot, C, cache_f16, node;
    cl_float eps, base;
};
static_assert(sizeof(PlanarParams) == 144, "PlanarParams must match the kernels' layout");
// PQ_ARGS of kernels/matvec_planar.cl: buffers x, (w, y) per matrix, bias,
// then the struct and local memory; the norm_ kernels add PlanarNormTail,
// the rope_ ones PlanarRopeTail after it.
using PlanarMatvecParams = KernelParams<Pointer /*x*/, Pointer /*w0*/, Pointer /*y0*/, Pointer /*w1*/, Pointer /*y1*/, Pointer /*w2*/,
                                        Pointer /*y2*/, Pointer /*bias*/, PlanarParams, Local /*red*/>;
using PlanarNormTail = KernelParams<Pointer /*norm weight*/>;
using PlanarRopeTail = KernelParams<Pointer /*positions*/, Pointer /*err*/>;

// repack_planar_*, unpack_planar_*, repack_aligned_q6_k (kernels/matvec_planar.cl, kquant.cl).
using BlockRepackParams = KernelParams<Buffer /*src*/, Pointer /*dst*/, cl_long /*blocks*/>;

}  // namespace hetero::opencl
