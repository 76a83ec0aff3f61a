// The graph validator every provider runs (sdk::check_graph) on graphs built
// from arbitrary bytes: tensor descriptors and nodes with any counts,
// dtypes, kinds, shapes and indices. It must answer, never read out of
// bounds or overflow.
#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>

#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t n_tensors = data[0] % 9, n_nodes = data[1] % 9;
    size_t at = 2;
    auto take = [&](void* dst, size_t bytes) {
        std::memset(dst, 0, bytes);
        const size_t n = std::min(bytes, size - at);
        std::memcpy(dst, data + at, n);
        at += n;
    };
    std::vector<hetero_tensor_desc> tensors(n_tensors);
    for (auto& t : tensors) {
        take(&t, sizeof t);
        t.name = nullptr;  // names are host pointers: not data
    }
    std::vector<hetero_node> nodes(n_nodes);
    for (auto& n : nodes) take(&n, sizeof n);
    hetero_graph g{};
    g.struct_size = sizeof g;
    g.abi_version = HETERO_ABI_VERSION;
    g.n_tensors = uint32_t(n_tensors);
    g.n_nodes = uint32_t(n_nodes);
    g.tensors = tensors.data();
    g.nodes = nodes.data();
    const std::string err = hetero::sdk::check_graph(g);
    (void)err;
    return 0;
}
