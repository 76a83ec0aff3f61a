// FNV-1a, 64 bit: a stable hash for cache keys and file identities (not for
// security). Chain calls by passing the previous result as `h`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hetero::sdk {

inline constexpr uint64_t kFnvOffset = 1469598103934665603ull;

inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
inline uint64_t fnv1a(std::string_view s, uint64_t h = kFnvOffset) { return fnv1a(s.data(), s.size(), h); }
// A string literal would bind to (pointer, length = h): say std::string_view("...").
template <size_t N>
uint64_t fnv1a(const char (&)[N], uint64_t = kFnvOffset) = delete;

}  // namespace hetero::sdk
