// Keeps the allocator's footprint of a long-running server bounded. glibc
// gives each thread that allocates its own heap ("arena", up to 8 per core),
// and a heap keeps what large requests freed: many connection threads
// parsing megabyte bodies leave gigabytes resident for good.
#pragma once

#include <cstddef>

namespace hetero::serve {

// Few arenas for the whole process, and large blocks mapped apart; call
// before any thread starts.
void limit_malloc_arenas();
// Hands freed memory back to the system after a request that brought
// `request_bytes` (nothing for small ones: trimming costs time).
void release_memory_after(size_t request_bytes);

}  // namespace hetero::serve
