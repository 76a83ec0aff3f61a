// How many bytes a memory-bound benchmark must cycle through so that its
// reads come from DRAM: 1 GiB or twice the L3 cache, whichever is larger (an
// LRU cache misses on every line of a cyclic stream longer than itself).
#pragma once

#include <algorithm>
#include <cstdint>

#include <unistd.h>

namespace hetero::bench {

inline uint64_t dram_stream_bytes() {
    uint64_t bytes = uint64_t(1) << 30;
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) bytes = std::max(bytes, 2 * uint64_t(l3));
#endif
    return bytes;
}

}  // namespace hetero::bench
