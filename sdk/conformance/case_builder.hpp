// Small helpers to describe the kit's graphs: tensors with their fills, nodes
// with their parameters, and seeded choices of ids and positions.
#pragma once

#include "conformance.hpp"

#include <hetero/sdk/graph_parts.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::conformance {

// splitmix64: tiny, fast and identical on every platform and standard library.
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
    int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }

private:
    uint64_t state_;
};

class CaseBuilder {
public:
    explicit CaseBuilder(std::string name, CaseKind kind = CaseKind::Compare) {
        c_.name = std::move(name);
        c_.kind = kind;
        c_.seed = seed_of(c_.name);
    }
    int32_t tensor(const std::string& name, uint32_t dtype, uint32_t kind, std::vector<int64_t> shape, Fill fill = {}) {
        TensorSpec t;
        t.desc = sdk::make_desc(dtype, kind, shape);
        t.name = name;
        t.fill = std::move(fill);
        c_.tensors.push_back(std::move(t));
        return int32_t(c_.tensors.size() - 1);
    }
    // A bound output: starts as NaN garbage so unwritten elements show.
    int32_t output(const std::string& name, uint32_t dtype, std::vector<int64_t> shape) {
        Fill f;
        f.kind = Fill::Garbage;
        return tensor(name, dtype, HETERO_TENSOR_BOUND, std::move(shape), f);
    }
    hetero_node& node(uint32_t op, std::vector<int32_t> inputs, int32_t out) {
        c_.nodes.push_back(sdk::make_node(op, inputs, out));
        return c_.nodes.back();
    }
    Case& get() { return c_; }
    Case done() { return std::move(c_); }

private:
    Case c_;
};

inline Fill uniform(double lo, double hi) {
    Fill f;
    f.lo = lo;
    f.hi = hi;
    return f;
}
inline Fill ids(int64_t below) {
    Fill f;
    f.kind = Fill::Ids;
    f.lo = 0;
    f.hi = double(below);
    return f;
}
inline Fill values(std::vector<int32_t> v) {
    Fill f;
    f.kind = Fill::Values;
    f.values = std::move(v);
    return f;
}

// n distinct positions in [0, limit), in random (non-contiguous) order.
inline std::vector<int32_t> distinct_positions(Rng& rng, int64_t n, int64_t limit) {
    std::vector<int32_t> all(static_cast<size_t>(limit));
    for (int64_t i = 0; i < limit; ++i) all[size_t(i)] = int32_t(i);
    for (int64_t i = 0; i < n; ++i) std::swap(all[size_t(i)], all[size_t(i + rng.below(limit - i))]);
    all.resize(size_t(n));
    return all;
}

inline std::vector<int32_t> contiguous_positions(int64_t first, int64_t n) {
    std::vector<int32_t> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[size_t(i)] = int32_t(first + i);
    return p;
}

}  // namespace hetero::conformance
