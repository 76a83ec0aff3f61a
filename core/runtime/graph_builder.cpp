#include <hetero/error.hpp>
#include <hetero/runtime/graph_builder.hpp>
#include <hetero/sdk/graph_parts.hpp>

namespace hetero {

int32_t GraphBuilder::tensor(uint32_t dtype, const std::vector<int64_t>& shape, uint32_t kind, std::string name) {
    if (shape.empty() || shape.size() > HETERO_MAX_DIMS) throw Error("graph builder: tensor '" + name + "' has bad rank");
    hetero_tensor_desc d = sdk::make_desc(dtype, kind, shape);
    names_.push_back(std::move(name));
    d.name = names_.back().c_str();
    tensors_.push_back(d);
    return int32_t(tensors_.size() - 1);
}

int32_t GraphBuilder::tensor(uint32_t dtype, std::initializer_list<int64_t> shape, uint32_t kind, std::string name) {
    return tensor(dtype, std::vector<int64_t>(shape), kind, std::move(name));
}

int32_t GraphBuilder::node(uint32_t op, std::initializer_list<int32_t> inputs, int32_t out,
                           std::initializer_list<float> fparams, std::initializer_list<int64_t> iparams) {
    hetero_node n{};
    n.op = op;
    n.n_inputs = uint32_t(inputs.size());
    size_t i = 0;
    for (int32_t in : inputs) n.inputs[i++] = in;
    n.output = out;
    i = 0;
    for (float f : fparams) n.fparams[i++] = f;
    i = 0;
    for (int64_t v : iparams) n.iparams[i++] = v;
    nodes_.push_back(n);
    return out;
}

hetero_graph GraphBuilder::view() const {
    return hetero_graph{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(tensors_.size()), uint32_t(nodes_.size()),
                        tensors_.data(), nodes_.data()};
}

}  // namespace hetero
