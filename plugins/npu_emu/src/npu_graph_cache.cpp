#include "npu_graph_cache.hpp"

#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace hetero::npu {

namespace fs = std::filesystem;

std::string default_cache_dir() { return hetero::sdk::user_cache_dir("npu_emu"); }

std::string GraphCache::file_of(uint64_t key, const std::string& profile_id) const {
    char name[64];
    std::snprintf(name, sizeof name, "%016llx.graph", static_cast<unsigned long long>(key ^ fnv1a(profile_id)));
    return (fs::path(dir_) / name).string();
}

CacheHit GraphCache::lookup(uint64_t key, const std::string& profile_id) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (built_.count(key)) return CacheHit::memory;
    }
    std::error_code ec;
    if (!dir_.empty() && fs::is_regular_file(file_of(key, profile_id), ec)) return CacheHit::disk;
    return CacheHit::none;
}

CacheHit GraphCache::prepare(uint64_t key, const std::string& profile_id) {
    const CacheHit hit = lookup(key, profile_id);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        built_.insert(key);
    }
    if (hit != CacheHit::none || dir_.empty()) return hit;
    // Written beside its name, then renamed: a reader never sees half a record.
    std::error_code ec;
    fs::create_directories(dir_, ec);
    // A cache that cannot be written only costs a rebuild later.
    sdk::write_file_atomically(file_of(key, profile_id), "hetero npu_emu graph 1\n" + profile_id + "\n");
    return hit;
}

}  // namespace hetero::npu
