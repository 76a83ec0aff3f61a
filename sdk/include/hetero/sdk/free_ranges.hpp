// The free byte ranges of one block of device memory that a provider carves
// buffers from (drivers round each allocation up to their page size and
// limit how many there are, so providers pool buffers in a few blocks).
// Best fit; freed ranges merge with their free neighbours. Not thread-safe:
// the owner locks.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace hetero::sdk {

class FreeRanges {
public:
    explicit FreeRanges(uint64_t size) : size_(size) { free_[0] = size; }

    // The offset of `size` bytes aligned to `align` (a power of two), taken
    // from the smallest free range that holds them; false where none does.
    bool take(uint64_t size, uint64_t align, uint64_t& offset) {
        auto best = free_.end();
        uint64_t best_left = ~uint64_t(0);
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            const uint64_t start = (it->first + align - 1) & ~(align - 1);
            if (start + size > it->first + it->second) continue;
            const uint64_t left = it->second - size;
            if (left < best_left) {
                best_left = left;
                best = it;
            }
        }
        if (best == free_.end()) return false;
        const uint64_t lo = best->first, hi = best->first + best->second;
        const uint64_t start = (lo + align - 1) & ~(align - 1);
        free_.erase(best);
        if (start > lo) free_[lo] = start - lo;
        if (start + size < hi) free_[start + size] = hi - (start + size);
        offset = start;
        return true;
    }

    // Returns [offset, offset + size); a range given back twice is ignored.
    void give_back(uint64_t offset, uint64_t size) {
        auto [it, added] = free_.emplace(offset, size);
        if (!added) return;
        auto next = std::next(it);
        if (next != free_.end() && it->first + it->second == next->first) {
            it->second += next->second;
            free_.erase(next);
        }
        if (it != free_.begin()) {
            auto prev = std::prev(it);
            if (prev->first + prev->second == it->first) {
                prev->second += it->second;
                free_.erase(it);
            }
        }
    }

    bool all_free() const { return free_.size() == 1 && free_.begin()->first == 0 && free_.begin()->second == size_; }
    void clear() { free_.clear(); }  // nothing free (a block given whole to one buffer)

private:
    uint64_t size_;
    std::map<uint64_t, uint64_t> free_;  // offset -> bytes, merged
};

}  // namespace hetero::sdk
