#include "value_checks.hpp"

#include "block_scales.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

namespace hetero::model_detail {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Elements per storage block and the bytes of one block.
void block_of(uint32_t dtype, int64_t& elems, uint64_t& bytes) {
    elems = sdk::block_elems(dtype);
    bytes = sdk::row_bytes(dtype, elems);
}

// Checks block `b` of the tensor (its values decoded to f32).
void check_block(const ModelFile& m, const WeightView& w, uint64_t b, int64_t elems, uint64_t block_bytes) {
    float v[sdk::kKBlock];
    sdk::row_to_f32(w.dtype, w.data + b * block_bytes, v, elems);
    for (int64_t i = 0; i < elems; ++i)
        if (!std::isfinite(v[i]))
            throw Error(fmt::format("{}: tensor '{}' holds a non-finite value ({}) at element {}: the file is damaged or was written wrong",
                                    m.path, w.name, v[i], b * uint64_t(elems) + uint64_t(i)));
}

}  // namespace

void check_block_scales(const ModelFile& m) {
    // One cache line per block is read, so the scan is bound by memory
    // bandwidth: tensors are spread over threads (each takes the next).
    std::vector<const WeightView*> weights;
    uint64_t bytes = 0;
    for (const auto& [name, w] : m.weights) {
        weights.push_back(&w);
        bytes += w.bytes;
    }
    std::vector<std::optional<BadScale>> found(weights.size());
    std::atomic<size_t> next{0};
    auto scan = [&] {
        for (size_t i; (i = next.fetch_add(1)) < weights.size();)
            found[i] = first_non_finite_scale(weights[i]->dtype, weights[i]->data, weights[i]->bytes);
    };
    constexpr uint64_t kBytesPerThread = 64u << 20;  // below this a thread costs more than it saves
    const unsigned n_threads = unsigned(std::clamp<uint64_t>(std::min<uint64_t>(std::thread::hardware_concurrency(), bytes / kBytesPerThread), 1, 8));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n_threads; ++t) pool.emplace_back(scan);
    scan();
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < weights.size(); ++i) {  // the first in name order, whatever thread found it
        if (!found[i]) continue;
        const WeightView& w = *weights[i];
        const BadScale& bad = *found[i];
        throw Error(fmt::format("{}: tensor '{}' ({}) block {} of {} has a non-finite scale {} = {}: the file is damaged or was written wrong",
                                m.path, w.name, sdk::dtype_name(w.dtype), bad.block, bad.blocks, bad.field, bad.value));
    }
}

void check_weight_values(const ModelFile& m) {
    check_block_scales(m);
    // Blocks sampled per matrix, spread over it.
    constexpr uint64_t kSamples = 64;
    for (const auto& [name, w] : m.weights) {
        int64_t elems = 1;
        uint64_t block_bytes = 0;
        block_of(w.dtype, elems, block_bytes);
        if (block_bytes == 0 || !w.data) continue;
        const uint64_t blocks = w.bytes / block_bytes;
        // Vectors and the embedding table (its rows are read by token id) are
        // decoded whole, unless the scale scan has already bounded every value
        // (a 7B's quantized table decoded block by block took most of its load).
        const bool whole =
            ends_with(name, "norm.weight") || ends_with(name, ".bias") || (name == "token_embd.weight" && !scales_bound_values(w.dtype));
        if (whole || blocks <= kSamples) {
            for (uint64_t b = 0; b < blocks; ++b) check_block(m, w, b, elems, block_bytes);
        } else {
            for (uint64_t s = 0; s < kSamples; ++s) check_block(m, w, s * (blocks - 1) / (kSamples - 1), elems, block_bytes);
        }
    }
}

}  // namespace hetero::model_detail
