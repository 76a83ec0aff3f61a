// A large host memcpy shared by a few threads. Providers stage weights into
// pinned or host-visible memory before the device copies them over the bus;
// one thread copying out of a model's memory-mapped pages runs near 6 GB/s,
// below what a PCIe 4/5 link takes, so the host copy was the upload's limit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>

namespace hetero::sdk {

inline void copy_in_parallel(void* dst, const void* src, uint64_t n, unsigned threads = 4) {
    constexpr uint64_t kMinPerThread = 1u << 20;  // below this a thread costs more than it saves
    threads = unsigned(std::clamp<uint64_t>(n / kMinPerThread, 1, threads));
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    if (threads == 1) {
        std::memcpy(d, s, n);
        return;
    }
    const uint64_t part = (n / threads + 4095) & ~uint64_t(4095);
    std::thread helpers[16];
    unsigned used = 0;
    for (uint64_t at = part; at < n && used < threads - 1 && used < 16; at += part, ++used)
        helpers[used] = std::thread([=] { std::memcpy(d + at, s + at, std::min(part, n - at)); });
    std::memcpy(d, s, std::min(part, n));
    for (unsigned t = 0; t < used; ++t) helpers[t].join();
}

}  // namespace hetero::sdk
