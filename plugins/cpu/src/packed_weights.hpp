// Constant Q4_0/Q8_0/Q5_0/IQ4_NL/Q4_K/Q6_K matmul weights repacked at compile into the layout of
// the packed kernels (see kernels.hpp). Several executables of one model
// (prefill and decode shapes) share one packed copy through the cache.
#pragma once

#include "huge_page_buffer.hpp"
#include "thread_pool.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace hetero::cpu {

struct PackedWeights {
    HugePageBuffer data;
    int64_t rows = 0;  // rows in the packed layout: a multiple of kPackRows
};

class PackedWeightCache {
public:
    // The packed form of the first floor(m / kPackRows) * kPackRows rows of
    // the [m, k] weights at `src`, made now or shared with an earlier compile.
    // Null when there is nothing to pack (fewer than kPackRows rows).
    std::shared_ptr<const PackedWeights> get(const uint8_t* src, uint32_t dtype, int64_t m, int64_t k, ThreadPool& pool);

private:
    using Key = std::tuple<const uint8_t*, uint32_t, int64_t, int64_t>;
    std::mutex mutex_;
    // Weak: the packed copy lives as long as some executable uses it. A live
    // entry's source cannot have changed, as constants outlive executables and
    // are never modified.
    std::map<Key, std::weak_ptr<const PackedWeights>> entries_;
};

}  // namespace hetero::cpu
