#include "memory_relief.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hetero::serve {

namespace {
constexpr size_t kTrimAfterBytes = 1u << 20;
}

void limit_malloc_arenas() {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, 2);
    // Blocks of a megabyte and more (request bodies, their JSON, their
    // tokens) are mapped on their own and unmapped when freed. A fixed
    // threshold: glibc otherwise raises it after such a free, and the next
    // large blocks stay in the heaps.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

void release_memory_after(size_t request_bytes) {
#if defined(__GLIBC__)
    if (request_bytes >= kTrimAfterBytes) malloc_trim(0);
#else
    (void)request_bytes;
#endif
}

}  // namespace hetero::serve
