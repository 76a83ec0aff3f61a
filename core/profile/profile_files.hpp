// What the profile and calibration caches share: file names, keys in JSON,
// bounded reads, the cache directory.
#pragma once

#include <hetero/profile/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace hetero::profile_files {

// [A-Za-z0-9.-] kept, runs of anything else one '_', at most max_len characters.
std::string sanitise(const std::string& s, size_t max_len);
nlohmann::json key_to_json(const ProfileKey& k);
ProfileKey key_from_json(const nlohmann::json& j);
// "driver was 'a', now 'b'; ..." for every field that differs.
std::string key_difference(const ProfileKey& stored, const ProfileKey& now);
// A regular file of at most max_bytes (a FIFO or a link to /dev/zero must
// neither hang nor fill memory); throws hetero::Error naming it.
std::string read_small_file(const std::string& path, uint64_t max_bytes, const char* what);
// $XDG_CACHE_HOME/hetero/<name>, else ~/.cache/hetero/<name>; "" when
// neither variable is set (nothing is then read from or saved to a cache).
std::string cache_subdir(const char* name);
// cache_subdir, or hetero::Error saying that there is none (for saving).
std::string require_cache_subdir(const char* name);
// The identity fields of a device (provider, version, name, driver, compute
// units); model_shape left empty for the caller.
ProfileKey device_key(const DeviceRef& device);
// Whether `path` names anything, a dangling link included (a bad file to
// report, not a missing one).
bool cache_file_present(const std::string& path);
// Creates the file's directory and writes it atomically (a reader, or
// another process saving the same file, never sees it half-written); throws
// hetero::Error naming the problem.
void write_cache_file(const std::string& path, const std::string& text);
// Now, UTC, ISO 8601 ("2026-11-27T21:43:35Z").
std::string utc_now();

}  // namespace hetero::profile_files
