#include "memory_need.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace hetero::solver_detail {

namespace {

double gib(uint64_t bytes) { return double(bytes) / double(uint64_t(1) << 30); }

}  // namespace

std::string memory_shortfall(const SolverProblem& pb) {
    uint64_t weights = 0, cache = 0, largest_layer = 0;
    for (const SolverLayer& l : pb.layers) {
        uint64_t layer = l.home_bytes;
        weights += l.home_bytes - std::min(l.cache_bytes, l.home_bytes);
        cache += std::min(l.cache_bytes, l.home_bytes);
        for (const SolverMatmul& m : l.matmuls) {
            weights += m.weight_bytes;
            layer += m.weight_bytes;
        }
        largest_layer = std::max(largest_layer, layer);
    }
    const uint64_t need = weights + cache + pb.activation_bytes;
    uint64_t have = 0;
    std::string devices;
    for (const SolverDevice& d : pb.devices) {
        if (d.memory_bytes == 0) continue;  // unlimited devices never make a placement fail
        have += d.memory_bytes;
        devices += fmt::format("{}{} {:.2f} GiB", devices.empty() ? "" : ", ", d.label, gib(d.memory_bytes));
    }
    std::string out = fmt::format("the model needs {:.2f} GiB (weights {:.2f} GiB, KV cache {:.2f} GiB, activations about {:.2f} GiB); "
                                  "the devices have {:.2f} GiB ({})",
                                  gib(need), gib(weights), gib(cache), gib(pb.activation_bytes), gib(have), devices);
    if (need <= have)
        out += fmt::format(", but no split of the layers fits them (the largest layer needs {:.2f} GiB on one device)", gib(largest_layer));
    return out + "; a smaller context (-c) shrinks the KV cache";
}

}  // namespace hetero::solver_detail
