// The parts of a hand-built hetero_graph: a tensor description from its
// dtype, kind and shape; a node from its op, inputs and output.
#pragma once

#include <hetero/ep_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetero::sdk {

// ndim counts every dimension given, but only HETERO_MAX_DIMS are stored:
// the graph checks refuse a longer shape by its rank.
inline hetero_tensor_desc make_desc(uint32_t dtype, uint32_t kind, const std::vector<int64_t>& shape) {
    hetero_tensor_desc d{};
    d.dtype = dtype;
    d.kind = kind;
    d.ndim = uint32_t(shape.size());
    for (size_t i = 0; i < shape.size() && i < HETERO_MAX_DIMS; ++i) d.shape[i] = shape[i];
    return d;
}

// n_inputs counts every input given, but only HETERO_MAX_INPUTS are stored.
inline hetero_node make_node(uint32_t op, const std::vector<int32_t>& inputs, int32_t output) {
    hetero_node n{};
    n.op = op;
    n.n_inputs = uint32_t(inputs.size());
    for (size_t i = 0; i < inputs.size() && i < HETERO_MAX_INPUTS; ++i) n.inputs[i] = inputs[i];
    n.output = output;
    return n;
}

}  // namespace hetero::sdk
