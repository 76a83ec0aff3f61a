// Graph analysis shared by providers that run several nodes in one kernel
// dispatch (fusions, node groups): which tensors are read where, which
// MATMUL + ADD pairs form a residual fusion, and how the static memory plan
// must be told that a fused dispatch keeps its inputs alive.
#pragma once

#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hetero::sdk {

// How many node inputs name each tensor.
inline std::vector<uint32_t> count_uses(const Graph& g) {
    std::vector<uint32_t> uses(g.tensors.size(), 0);
    for (const hetero_node& n : g.nodes)
        for (uint32_t i = 0; i < n.n_inputs; ++i) ++uses[size_t(n.inputs[i])];
    return uses;
}

// Does any node outside [first, first + count) read tensor `t`? (`uses`: count_uses)
inline bool read_elsewhere(const Graph& g, const std::vector<uint32_t>& uses, int32_t t, size_t first, size_t count) {
    uint32_t inside = 0;
    for (size_t m = first; m < first + count; ++m)
        inside += uint32_t(std::count(g.nodes[m].inputs, g.nodes[m].inputs + g.nodes[m].n_inputs, t));
    return uses[size_t(t)] != inside;
}

// A MATMUL (without bias) that also performs the ADD right after it:
// out = residual + x W^T, written to the ADD's output.
struct ResidualFusion {
    int32_t residual = -1;  // the ADD's other input; -1 = no fusion
    int32_t out = -1;       // the ADD's output
};

// Per node: the fusion of a MATMUL without bias with the ADD right after it
// that consumes its result (the residual connection), which saves a dispatch
// and a round trip of the sum through memory. Only when it cannot change the
// result: the product feeds nothing else, shapes match element for element,
// and the ADD's output is not bound memory that may alias the matmul's input.
// Returns one entry per node (set on the MATMUL).
inline std::vector<ResidualFusion> find_residual_fusions(const Graph& g, const std::vector<uint32_t>& uses) {
    std::vector<ResidualFusion> f(g.nodes.size());
    auto kind = [&](int32_t t) { return g.tensors[t].kind; };
    for (size_t i = 0; i + 1 < g.nodes.size(); ++i) {
        const hetero_node& mm = g.nodes[i];
        const hetero_node& add = g.nodes[i + 1];
        if (mm.op != HETERO_OP_MATMUL || mm.n_inputs != 2 || add.op != HETERO_OP_ADD || add.n_inputs != 2) continue;
        const int32_t prod = mm.output;
        if (kind(prod) != HETERO_TENSOR_INTERNAL || uses[size_t(prod)] != 1) continue;
        const int side = add.inputs[0] == prod ? 0 : add.inputs[1] == prod ? 1 : -1;
        if (side < 0) continue;
        const int32_t other = add.inputs[1 - side];
        const int64_t count = element_count(g.tensors[prod]);
        if (other == prod || element_count(g.tensors[other]) != count || element_count(g.tensors[add.output]) != count ||
            g.tensors[other].dtype != HETERO_DTYPE_F32 || g.tensors[add.output].dtype != HETERO_DTYPE_F32)
            continue;
        if (kind(add.output) == HETERO_TENSOR_CONSTANT || (kind(add.output) == HETERO_TENSOR_BOUND && kind(mm.inputs[0]) == HETERO_TENSOR_BOUND))
            continue;
        f[i] = ResidualFusion{other, add.output};
    }
    return f;
}

// Nodes [first, first + count) that one dispatch runs (a residual fusion, a
// node group) write every output while reading every input, at the first
// node's place in the order. In the memory plan a later node's output is
// born later and could take the memory of an input that died before it; so
// every input of the earlier nodes must stay alive up to the last node,
// which `planned` records by listing them as extra inputs of the last node.
// Returns false, changing nothing, when the last node has too few free slots.
inline bool keep_inputs_alive(const Graph& g, size_t first, size_t count, Graph& planned) {
    hetero_node extended = planned.nodes[first + count - 1];
    auto made_inside = [&](int32_t t) {
        for (size_t m = first; m < first + count; ++m)
            if (g.nodes[m].output == t) return true;
        return false;
    };
    for (size_t m = first; m + 1 < first + count; ++m)
        for (uint32_t i = 0; i < g.nodes[m].n_inputs; ++i) {
            const int32_t in = g.nodes[m].inputs[i];
            // Intermediates of the fused nodes are never read by the dispatch.
            if (g.tensors[size_t(in)].kind != HETERO_TENSOR_INTERNAL || made_inside(in)) continue;
            if (std::find(extended.inputs, extended.inputs + extended.n_inputs, in) != extended.inputs + extended.n_inputs) continue;
            if (extended.n_inputs == HETERO_MAX_INPUTS) return false;
            extended.inputs[extended.n_inputs++] = in;
        }
    planned.nodes[first + count - 1] = extended;
    return true;
}

}  // namespace hetero::sdk
