#include "cl_lowering.hpp"

#include "cl_buffer.hpp"
#include "cl_util.hpp"

#include <hetero/sdk/dispatch_profile.hpp>

#include <algorithm>
#include <utility>

namespace hetero::opencl {
namespace {

// Mirrors the dtype numbers of kernels/common.cl.
static_assert(HETERO_DTYPE_F32 == 0 && HETERO_DTYPE_F16 == 1 && HETERO_DTYPE_BF16 == 2 && HETERO_DTYPE_Q8_0 == 3 &&
              HETERO_DTYPE_Q4_0 == 4 && HETERO_DTYPE_Q4_K == 7 && HETERO_DTYPE_Q5_K == 8 && HETERO_DTYPE_Q6_K == 9);

// 2 bytes for f16/bf16 and GGUF blocks.
uint64_t alignment_of(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F32: case HETERO_DTYPE_I32: return 4;
        case HETERO_DTYPE_I8: return 1;
        default: return 2;
    }
}

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

// A one-dimensional grid of at least `items` work-items in groups of `wg`.
void grid1(Launch& l, size_t items, size_t wg) {
    l.dims = 1;
    l.local[0] = wg;
    l.global[0] = round_up(std::max<size_t>(items, 1), wg);
}

// A ROPE kernel's grid: a work-item per rotated pair (and per dim left as
// it is), per head, per row.
void rope_grid(Launch& l, size_t wg_cap, int64_t N, int64_t heads, int64_t Hd, int64_t rot) {
    const size_t items = size_t(Hd - rot / 2);
    const size_t wg = std::min(wg_cap, round_up(items, 8));
    l.dims = 3;
    l.local[0] = wg;
    l.global[0] = round_up(items, wg);
    l.global[1] = size_t(heads);
    l.global[2] = size_t(N);
}

std::vector<int32_t> node_inputs(const hetero_node& node) { return std::vector<int32_t>(node.inputs, node.inputs + node.n_inputs); }

}  // namespace

void tensor_error(const hetero_tensor_desc& t, int64_t id, const std::string& what) {
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "tensor " + std::to_string(id) + (t.name && *t.name ? " (" + std::string(t.name) + ")" : "") + what);
}

void check_alignment(const hetero_tensor_desc& t, uint32_t id, uint64_t offset) {
    const uint64_t a = alignment_of(t.dtype);
    if (offset % a != 0)
        tensor_error(t, id, ": binding offset " + std::to_string(offset) + " is not a multiple of " + std::to_string(a) +
                                " bytes as its dtype " + sdk::dtype_name(t.dtype) + " needs");
}

Lowering::Lowering(const sdk::Graph& graph, const std::vector<sdk::BoundTensor>& constants, ClDevice& device, const Program& program,
                   const LaunchMemory& memory)
    : graph_(graph), constants_(constants), device_(device), program_(program), memory_(memory) {}

void Lowering::lower(uint32_t n, const Fusions& fusions) {
    if (fusions.absorbed[n]) return;
    if (fusions.matmul[n].count > 0) add_matmul(fusions.matmul[n]);
    else if (fusions.rope_store[n]) add_rope_store(n);
    else add_node(n, graph_.nodes[n]);
}

BufferAt Lowering::at(int32_t tensor) const {
    switch (graph_.tensors[size_t(tensor)].kind) {
        case HETERO_TENSOR_INTERNAL: return BufferAt{memory_.arena, cl_ulong(memory_.offset[size_t(tensor)])};
        case HETERO_TENSOR_CONSTANT: {
            const sdk::BoundTensor& c = constants_[size_t(tensor)];
            // Weights another executable had rewritten in the planar layout
            // are readable only by the kernels that take it.
            const ClBuffer& b = cl_buffer(c.buffer);
            const hetero_tensor_desc& t = graph_.tensors[size_t(tensor)];
            if (!std::binary_search(planar_reads_.begin(), planar_reads_.end(), tensor) &&
                !b.planar_regions_overlapping(c.offset, sdk::tensor_bytes(t)).empty())
                tensor_error(t, tensor, " is bound over weights this provider keeps in its planar layout, as a different tensor or "
                                        "by an op that reads them in the GGUF layout");
            return BufferAt{b.mem(), cl_ulong(b.base() + c.offset)};
        }
        default: return BufferAt::at_run(tensor);
    }
}

Launch Lowering::start(const Program& program, const char* kernel) const {
    cl_int err = CL_SUCCESS;
    Launch l;
    l.kernel.reset(clCreateKernel(program.get(), kernel, &err));
    cl_check(err, (std::string("clCreateKernel ") + kernel).c_str(), HETERO_ERR_COMPILE_FAILED);
    return l;
}

void Lowering::finish(Launch l, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs) {
    if (profiling_enabled()) {  // only the profile reads labels
        char name[128] = {};
        clGetKernelInfo(l.kernel.get(), CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
        l.label = name;
        const auto& T = graph_.tensors;
        for (size_t i = 0; i < inputs.size(); ++i) {
            l.label += (i ? ", " : " ") + sdk::shape_label(T[size_t(inputs[i])]);
            l.bytes += sdk::tensor_bytes(T[size_t(inputs[i])]);
        }
        for (size_t i = 0; i < outputs.size(); ++i) {
            l.label += (i ? ", " : " -> ") + sdk::shape_label(T[size_t(outputs[i])]);
            l.bytes += sdk::tensor_bytes(T[size_t(outputs[i])]);
        }
    }
    launches_.push_back(std::move(l));
}

void Lowering::add_node(uint32_t index, const hetero_node& node) {
    switch (node.op) {
        case HETERO_OP_EMBEDDING: return add_embedding(index, node);
        case HETERO_OP_RMSNORM: return add_rmsnorm(node);
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: return add_rope(node);
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return add_attention(index, node);
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
        case HETERO_OP_SOFTCAP:
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: return add_elementwise(node);
        case HETERO_OP_SOFTMAX: return add_softmax(node);
        case HETERO_OP_CONVERT: return add_convert(node);
        case HETERO_OP_STORE_ROWS: return add_store_rows(index, node);
        default: sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("op ") + sdk::op_name(node.op) + " is not provided");
    }
}

void Lowering::add_embedding(uint32_t index, const hetero_node& node) {
    const hetero_tensor_desc &table = graph_.tensors[size_t(node.inputs[0])], &ids = graph_.tensors[size_t(node.inputs[1])];
    Launch l = start("embedding");
    const cl_int V = cl_int(table.shape[0]), D = cl_int(table.shape[1]);
    // Before the table is placed: rewritten planar, it is read so.
    const bool planar = planar_constants(&node.inputs[0], 1);
    l.set_args<EmbeddingParams>(at(node.inputs[0]), cl_int(table.dtype), at(node.inputs[1]), at(node.output), D, V, memory_.error_flag,
                                cl_int(index), cl_ulong(planar ? sdk::element_count(table) / sdk::kQBlock : 0));
    const size_t wg = program_.group_size("embedding", 64);
    l.dims = 2;
    l.local[0] = wg;
    l.global[0] = round_up(size_t(D), wg);
    l.global[1] = size_t(ids.shape[0]);
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_rmsnorm(const hetero_node& node) {
    const hetero_tensor_desc& x = graph_.tensors[size_t(node.inputs[0])];
    Launch l = start("rmsnorm");
    const int64_t D = sdk::inner_dim(x), rows = sdk::element_count(x) / D;
    const size_t wg = program_.group_size("rmsnorm", 256);
    l.set_args<RmsnormParams>(at(node.inputs[0]), at(node.inputs[1]), at(node.output), cl_int(D), cl_float(node.fparams[0]),
                              LocalFloats{wg});
    grid1(l, size_t(rows) * wg, wg);
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_rope(const hetero_node& node) {
    const bool scaled = node.op == HETERO_OP_ROPE_SCALED;
    const char* name = scaled ? "rope_scaled" : "rope";
    const hetero_tensor_desc& x = graph_.tensors[size_t(node.inputs[0])];
    Launch l = start(name);
    const int64_t N = x.shape[0], H = x.shape[1], Hd = x.shape[2];
    const int64_t rot = sdk::rope_dims(node, Hd);
    l.set_args<RopeParams>(at(node.inputs[0]), at(node.inputs[1]), at(node.output), cl_int(H), cl_int(Hd), cl_int(rot),
                           cl_int(node.iparams[0] == HETERO_ROPE_HALVES), cl_float(node.fparams[0]));
    if (scaled) {
        // Without factors the kernel never reads them: positions stand in.
        const bool factors = node.n_inputs > 2;
        l.set_args<RopeScalingTail, RopeParams>(at(node.inputs[factors ? 2 : 1]), cl_int(factors),
                                                cl_float(node.fparams[1] != 0.f ? node.fparams[1] : 1.f));
    }
    rope_grid(l, program_.group_size(name, 64), N, H, Hd, rot);
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_elementwise(const hetero_node& node) {
    const auto& T = graph_.tensors;
    const auto n = cl_ulong(sdk::element_count(T[size_t(node.output)]));
    const char* name = node.op == HETERO_OP_SWIGLU  ? "swiglu"
                       : node.op == HETERO_OP_GEGLU ? "geglu"
                       : node.op == HETERO_OP_SOFTCAP ? "softcap"
                                                      : "binary";  // ADD, MUL
    Launch l = start(name);
    if (node.op == HETERO_OP_SWIGLU || node.op == HETERO_OP_GEGLU) {
        l.set_args<GatedParams>(at(node.inputs[0]), at(node.inputs[1]), at(node.output), n);
    } else if (node.op == HETERO_OP_SOFTCAP) {
        l.set_args<SoftcapParams>(at(node.inputs[0]), at(node.output), n, cl_float(node.fparams[0]));
    } else {
        const hetero_tensor_desc &a = T[size_t(node.inputs[0])], &b = T[size_t(node.inputs[1])];
        const bool same = sdk::element_count(b) == sdk::element_count(a);
        l.set_args<BinaryParams>(at(node.inputs[0]), at(node.inputs[1]), at(node.output), n, cl_int(same ? 0 : b.shape[0]),
                                 cl_int(node.op == HETERO_OP_MUL));
    }
    grid1(l, size_t(n), program_.group_size(name, 256));
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_softmax(const hetero_node& node) {
    const hetero_tensor_desc& x = graph_.tensors[size_t(node.inputs[0])];
    Launch l = start("softmax");
    const int64_t D = sdk::inner_dim(x), rows = sdk::element_count(x) / D;
    const size_t wg = program_.group_size("softmax", 256);
    l.set_args<SoftmaxParams>(at(node.inputs[0]), at(node.output), cl_int(D), cl_float(node.fparams[0] == 0.f ? 1.f : node.fparams[0]),
                              LocalFloats{wg});
    grid1(l, size_t(rows) * wg, wg);
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_convert(const hetero_node& node) {
    const hetero_tensor_desc &in = graph_.tensors[size_t(node.inputs[0])], &out = graph_.tensors[size_t(node.output)];
    const uint32_t src = in.dtype, dst = out.dtype;
    const auto n = cl_ulong(sdk::element_count(out));
    const char* name = src != HETERO_DTYPE_F32          ? "convert_to_f32"
                       : dst == HETERO_DTYPE_Q8_0 ? "quantize_q8_0"
                       : dst == HETERO_DTYPE_Q4_0 ? "quantize_q4_0"
                                                  : "convert_from_f32";
    Launch l = start(name);
    // Before the source is placed: rewritten planar, it is read so.
    const bool planar = src != HETERO_DTYPE_F32 && planar_constants(&node.inputs[0], 1);
    if (sdk::is_block_dtype(dst)) {
        l.set_args<QuantizeParams>(at(node.inputs[0]), at(node.output), cl_ulong(n / sdk::kQBlock));
        grid1(l, size_t(n / sdk::kQBlock), program_.group_size(name, 64));
    } else {
        if (src != HETERO_DTYPE_F32)
            l.set_args<ConvertToF32Params>(at(node.inputs[0]), cl_int(src), at(node.output), n, cl_ulong(planar ? n / sdk::kQBlock : 0));
        else
            l.set_args<ConvertFromF32Params>(at(node.inputs[0]), cl_int(dst), at(node.output), n);
        grid1(l, size_t(n), program_.group_size(name, 256));
    }
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_store_rows(uint32_t index, const hetero_node& node) {
    const hetero_tensor_desc &rows = graph_.tensors[size_t(node.inputs[0])], &cache = graph_.tensors[size_t(node.output)];
    Launch l = start("store_rows");
    const int64_t N = rows.shape[0], D = sdk::row_width(rows), C = cache.shape[0];
    l.set_args<StoreRowsParams>(at(node.inputs[0]), at(node.inputs[1]), at(node.output), cl_int(D), cl_int(C),
                                cl_int(cache.dtype == HETERO_DTYPE_F16), memory_.error_flag, cl_int(index));
    const size_t wg = program_.group_size("store_rows", 64);
    l.dims = 2;
    l.local[0] = wg;
    l.global[0] = round_up(size_t(D), wg);
    l.global[1] = size_t(N);
    finish(std::move(l), node_inputs(node), {node.output});
}

void Lowering::add_rope_store(uint32_t n) {
    const auto& G = graph_;
    const hetero_node &rq = G.nodes[n], &rk = G.nodes[n + 1], &sk = G.nodes[n + 2], &sv = G.nodes[n + 3];
    const hetero_tensor_desc &q = G.tensors[size_t(rq.inputs[0])], &k = G.tensors[size_t(rk.inputs[0])], &kc = G.tensors[size_t(sk.output)];
    const int64_t N = q.shape[0], Hq = q.shape[1], Hk = k.shape[1], Hd = q.shape[2];
    const int64_t rot = sdk::rope_dims(rq, Hd);
    Launch l = start("rope_store");
    // ROPE_SCALED's parameters; positions stand in for absent factors (never read).
    const bool scaled = rq.op == HETERO_OP_ROPE_SCALED, factors = scaled && rq.n_inputs > 2;
    l.set_args<RopeStoreParams>(at(rq.inputs[0]), at(rq.inputs[1]), at(rq.output), at(rk.inputs[0]), at(sk.output), at(sv.inputs[0]),
                                at(sv.output), cl_int(Hq), cl_int(Hk), cl_int(Hd), cl_int(rot), cl_int(rq.iparams[0] == HETERO_ROPE_HALVES),
                                cl_float(rq.fparams[0]), cl_int(kc.shape[0]), cl_int(kc.dtype == HETERO_DTYPE_F16), memory_.error_flag,
                                cl_int(n + 2), at(rq.inputs[factors ? 2 : 1]), cl_int(scaled), cl_int(factors),
                                cl_float(scaled && rq.fparams[1] != 0.f ? rq.fparams[1] : 1.f), at(sk.inputs[1]));
    rope_grid(l, program_.group_size("rope_store", 64), N, Hq + 2 * Hk, Hd, rot);
    std::vector<int32_t> reads = {rq.inputs[0], rk.inputs[0], sv.inputs[0], rq.inputs[1]};
    if (sk.inputs[1] != rq.inputs[1]) reads.push_back(sk.inputs[1]);
    if (factors) reads.push_back(rq.inputs[2]);
    finish(std::move(l), reads, {rq.output, sk.output, sv.output});
}

}  // namespace hetero::opencl
