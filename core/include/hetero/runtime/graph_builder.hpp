// Builds a hetero_graph node by node; owns the descriptors and names so the
// view stays valid while the builder lives.
#pragma once

#include <hetero/ep_api.h>

#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

namespace hetero {

class GraphBuilder {
public:
    int32_t tensor(uint32_t dtype, std::initializer_list<int64_t> shape, uint32_t kind, std::string name);
    int32_t tensor(uint32_t dtype, const std::vector<int64_t>& shape, uint32_t kind, std::string name);
    // Adds a node writing a new internal tensor (or `out` when given) and returns its id.
    int32_t node(uint32_t op, std::initializer_list<int32_t> inputs, int32_t out, std::initializer_list<float> fparams = {},
                 std::initializer_list<int64_t> iparams = {});
    // Appends a ready node whose tensor ids index this builder's tensors.
    void node(const hetero_node& n) { nodes_.push_back(n); }
    const hetero_tensor_desc& desc(int32_t id) const { return tensors_.at(size_t(id)); }
    hetero_graph view() const;
    size_t node_count() const { return nodes_.size(); }

private:
    std::vector<hetero_tensor_desc> tensors_;
    std::vector<hetero_node> nodes_;
    std::deque<std::string> names_;
};

}  // namespace hetero
