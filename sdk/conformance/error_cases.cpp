// Cases a provider must refuse cleanly: malformed graphs, missing or
// out-of-range bindings, data-dependent execution errors, and buffer ranges.
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <string>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND, I = HETERO_TENSOR_INTERNAL, C = HETERO_TENSOR_CONSTANT;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;

// An input tensor of a one-node case.
struct Operand {
    const char* name;
    uint32_t dtype;
    uint32_t kind;
    std::vector<int64_t> shape;
    Fill fill = {};
};

// `op` on fresh input tensors into a fresh f32 output; callers break one thing.
CaseBuilder one_node(const std::string& name, CaseKind kind, uint32_t op, const std::vector<Operand>& inputs,
                     std::vector<int64_t> out_shape) {
    CaseBuilder b(name, kind);
    std::vector<int32_t> ids;
    for (const Operand& in : inputs) ids.push_back(b.tensor(in.name, in.dtype, in.kind, in.shape, in.fill));
    b.node(op, ids, b.output("out", F32, std::move(out_shape)));
    return b;
}

// x [2, 64] * W [16, 64]^T -> out [2, 16].
CaseBuilder small_matmul(const std::string& name, CaseKind kind) {
    return one_node(name, kind, HETERO_OP_MATMUL, {{"x", F32, B, {2, 64}}, {"w", F32, B, {16, 64}}}, {2, 16});
}

void malformed_graph_cases(std::vector<Case>& out) {
    const CaseKind K = CaseKind::RejectCompile;
    out.push_back(one_node("invalid/matmul_k_mismatch", K, HETERO_OP_MATMUL, {{"x", F32, B, {2, 64}}, {"w", F32, B, {16, 32}}}, {2, 16})
                      .done());
    {
        CaseBuilder b = small_matmul("invalid/unknown_op", K);
        b.get().nodes[0].op = 99;
        out.push_back(b.done());
    }
    {
        CaseBuilder b = small_matmul("invalid/output_id_out_of_range", K);
        b.get().nodes[0].output = 7;
        out.push_back(b.done());
    }
    {
        CaseBuilder b = small_matmul("invalid/negative_input_id", K);
        b.get().nodes[0].inputs[1] = -1;
        out.push_back(b.done());
    }
    {
        CaseBuilder b = small_matmul("invalid/too_many_inputs", K);
        b.get().nodes[0].n_inputs = HETERO_MAX_INPUTS + 1;
        out.push_back(b.done());
    }
    out.push_back(
        one_node("invalid/reads_unwritten_internal", K, HETERO_OP_ADD, {{"a", F32, B, {2, 8}}, {"never_written", F32, I, {2, 8}}}, {2, 8})
            .done());
    {
        CaseBuilder b("invalid/writes_constant", K);
        const int32_t a = b.tensor("a", F32, B, {2, 8});
        const int32_t w = b.tensor("w", F32, C, {2, 8});
        b.node(HETERO_OP_ADD, {a, a}, w);
        out.push_back(b.done());
    }
    {
        CaseBuilder b = one_node("invalid/rope_odd_rot_dims", K, HETERO_OP_ROPE,
                                 {{"x", F32, B, {1, 2, 16}}, {"positions", I32, B, {1}, values({0})}}, {1, 2, 16});
        b.get().nodes[0].fparams[0] = 10000.f;
        b.get().nodes[0].iparams[1] = 5;
        out.push_back(b.done());
    }
    out.push_back(one_node("invalid/q4_0_row_not_multiple_of_32", K, HETERO_OP_MATMUL,
                           {{"x", F32, B, {1, 48}}, {"w", HETERO_DTYPE_Q4_0, B, {4, 48}}}, {1, 4})
                      .done());
    {
        CaseBuilder b = one_node("invalid/attention_heads_not_multiple_of_kv_heads", K, HETERO_OP_ATTENTION,
                                 {{"q", F32, B, {1, 3, 8}},
                                  {"k_cache", F32, B, {4, 2, 8}},
                                  {"v_cache", F32, B, {4, 2, 8}},
                                  {"positions", I32, B, {1}, values({0})}},
                                 {1, 3, 8});
        b.get().nodes[0].fparams[0] = 0.35f;
        out.push_back(b.done());
    }
    {
        CaseBuilder b("invalid/store_rows_into_internal", K);
        const int32_t src = b.tensor("src", F32, B, {1, 8});
        const int32_t p = b.tensor("positions", I32, B, {1}, values({0}));
        const int32_t cache = b.tensor("cache", F32, I, {4, 8});
        b.node(HETERO_OP_STORE_ROWS, {src, p}, cache);
        out.push_back(b.done());
    }
    out.push_back(one_node("invalid/zero_dimension", K, HETERO_OP_SOFTMAX, {{"a", F32, B, {0, 8}}}, {0, 8}).done());
    out.push_back(one_node("invalid/ndim_zero", K, HETERO_OP_SOFTMAX, {{"a", F32, B, {}}}, {}).done());
    out.push_back(one_node("invalid/unknown_dtype", K, HETERO_OP_SOFTMAX, {{"a", 42, B, {2, 8}}}, {2, 8}).done());
    {
        CaseBuilder b = small_matmul("invalid/graph_struct_size", K);
        b.get().fault = Fault::GraphStructSize;
        out.push_back(b.done());
    }
    {
        CaseBuilder b = small_matmul("invalid/graph_abi_major", K);
        b.get().fault = Fault::GraphAbiMajor;
        out.push_back(b.done());
    }
}

void binding_cases(std::vector<Case>& out) {
    const CaseKind K = CaseKind::RejectExecute;
    for (auto [name, tensor] : {std::pair{"invalid/unbound_input", 0}, std::pair{"invalid/unbound_output", 2}}) {
        CaseBuilder b = small_matmul(name, K);
        b.get().fault = Fault::Unbound;
        b.get().fault_tensor = tensor;
        out.push_back(b.done());
    }
    for (auto [name, tensor] : {std::pair{"invalid/binding_out_of_range_input", 1}, std::pair{"invalid/binding_out_of_range_output", 2}}) {
        CaseBuilder b = small_matmul(name, K);
        b.get().fault = Fault::BindingOutOfRange;
        b.get().fault_tensor = tensor;
        out.push_back(b.done());
    }
}

void bad_data_cases(std::vector<Case>& out) {
    const CaseKind K = CaseKind::RejectExecute;
    for (auto [name, id] : {std::pair{"error/embedding_id_past_table", 100}, std::pair{"error/embedding_id_negative", -1}}) {
        CaseBuilder b(name, K);
        const int32_t table = b.tensor("table", HETERO_DTYPE_Q8_0, B, {100, 32});
        const int32_t idv = b.tensor("ids", I32, B, {3}, values({5, id, 7}));
        b.node(HETERO_OP_EMBEDDING, {table, idv}, b.output("out", F32, {3, 32}));
        out.push_back(b.done());
    }
    for (auto [name, p] : {std::pair{"error/attention_position_past_cache", 16}, std::pair{"error/attention_position_negative", -3}}) {
        CaseBuilder b(name, K);
        const int32_t q = b.tensor("q", F32, B, {2, 4, 8});
        const int32_t k = b.tensor("k_cache", F32, B, {16, 2, 8});
        const int32_t v = b.tensor("v_cache", F32, B, {16, 2, 8});
        const int32_t pos = b.tensor("positions", I32, B, {2}, values({3, p}));
        b.node(HETERO_OP_ATTENTION, {q, k, v, pos}, b.output("out", F32, {2, 4, 8})).fparams[0] = 0.35f;
        out.push_back(b.done());
    }
    // Prefill-sized: one bad row among many, where providers take tiled kernels.
    for (auto [name, p] : {std::pair{"error/attention_prefill_position_past_cache", 40}, std::pair{"error/attention_prefill_position_negative", -1}}) {
        CaseBuilder b(name, K);
        std::vector<int32_t> positions(24);
        for (size_t i = 0; i < positions.size(); ++i) positions[i] = int32_t(i);
        positions[13] = p;
        const int32_t q = b.tensor("q", F32, B, {24, 8, 64});
        const int32_t k = b.tensor("k_cache", HETERO_DTYPE_F16, B, {32, 1, 64});
        const int32_t v = b.tensor("v_cache", HETERO_DTYPE_F16, B, {32, 1, 64});
        const int32_t pos = b.tensor("positions", I32, B, {24}, values(positions));
        b.node(HETERO_OP_ATTENTION, {q, k, v, pos}, b.output("out", F32, {24, 8, 64})).fparams[0] = 0.125f;
        out.push_back(b.done());
    }
    for (auto [name, p] : {std::pair{"error/store_rows_position_past_cache", 9}, std::pair{"error/store_rows_position_negative", -1}}) {
        for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16}) {
            CaseBuilder b(std::string(name) + "_" + sdk::dtype_name(dtype), K);
            const int32_t src = b.tensor("src", F32, B, {2, 16});
            const int32_t pos = b.tensor("positions", I32, B, {2}, values({p, 1}));
            const int32_t cache = b.tensor("cache", dtype, B, {9, 16});
            b.node(HETERO_OP_STORE_ROWS, {src, pos}, cache);
            out.push_back(b.done());
        }
    }
}

void buffer_cases(std::vector<Case>& out) {
    {
        CaseBuilder b("buffer/out_of_range", CaseKind::BufferRange);
        b.get().buffer_bytes = 1000;
        out.push_back(b.done());
    }
    for (uint64_t bytes : {1ull, 7ull, 4099ull, 1ull << 20}) {
        CaseBuilder b("buffer/round_trip_" + std::to_string(bytes), CaseKind::BufferRoundTrip);
        b.get().buffer_bytes = bytes;
        out.push_back(b.done());
    }
}

void device_cases(std::vector<Case>& out) {
    CaseBuilder b("device/props", CaseKind::DeviceProps);
    out.push_back(b.done());
}

}  // namespace

void add_error_cases(std::vector<Case>& out) {
    add_groups(out, {malformed_graph_cases, binding_cases, bad_data_cases, buffer_cases, device_cases});
}

}  // namespace hetero::conformance
