// Which static-shape graphs the emulated NPU has built: in memory for this
// instance, on disk across processes (a real NPU stack caches its compiled
// graphs the same way). A hit costs no modelled build time.
#pragma once

#include <hetero/sdk/hash.hpp>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

namespace hetero::npu {

enum class CacheHit { none, memory, disk };

class GraphCache {
public:
    // dir "" = no disk cache.
    explicit GraphCache(std::string dir) : dir_(std::move(dir)) {}
    // Looks the key up; on a miss records it (memory and disk) as built now.
    CacheHit prepare(uint64_t key, const std::string& profile_id);
    // Whether the key is built, without recording anything.
    CacheHit lookup(uint64_t key, const std::string& profile_id);
    const std::string& dir() const { return dir_; }

private:
    std::string file_of(uint64_t key, const std::string& profile_id) const;
    std::string dir_;
    std::mutex mutex_;
    std::set<uint64_t> built_;
};

// The default disk cache: $XDG_CACHE_HOME/hetero/npu_emu, else ~/.cache/hetero/npu_emu.
std::string default_cache_dir();

using sdk::fnv1a;  // graph and weight keys (hetero/sdk/hash.hpp)

}  // namespace hetero::npu
