// What the profile and calibration caches share: file names, keys in JSON,
// bounded reads, the cache directory.
#pragma once

#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/profile/profile.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// A fit point's overhead is within a second either way.
constexpr double kMaxFitOverheadSeconds = 1.0;
// Session fit points as both files store them: [{n, scale, overhead_seconds}].
nlohmann::json fit_points_to_json(const std::vector<SessionFitPoint>& fit);
// Refuses (hetero::Error, naming `what`) a point outside 1..max_n, a scale
// outside (0, max_scale], an overhead past kMaxFitOverheadSeconds, or points
// out of ascending order.
std::vector<SessionFitPoint> fit_points_from_json(const nlohmann::json& j, const char* what, int64_t max_n, double max_scale);
// Refuses a file of another format name or version: "not a hetero WHAT".
void check_format(const nlohmann::json& j, const char* name, int version, const char* what);

// `parse()` with its JSON and range errors both reported as "WHAT PATH is not valid: ...".
template <class Parse>
auto parse_cache_file(const char* what, const std::string& path, Parse parse) {
    try {
        return parse();
    } catch (const nlohmann::json::exception& e) {
        throw Error(fmt::format("{} {} is not valid: {}", what, path, e.what()));
    } catch (const Error& e) {
        throw Error(fmt::format("{} {} is not valid: {}", what, path, e.what()));
    }
}

// The cached file at `path` as `read` gives it, or nothing: when there is no
// file, when it cannot be read (a warning says why), or when it was stored
// under another key (`on_stale` is told the difference).
template <class Stored, class Read, class OnStale>
std::optional<Stored> load_cache_file(const std::string& path, const ProfileKey& key, Read read, OnStale on_stale) {
    if (!cache_file_present(path)) return std::nullopt;
    Stored stored;
    try {
        stored = read(path);
    } catch (const Error& e) {
        log(LogLevel::warn, fmt::format("{}; ignoring it", e.what()));
        return std::nullopt;
    }
    if (!(stored.key == key)) {
        on_stale(key_difference(stored.key, key));
        return std::nullopt;
    }
    return stored;
}

}  // namespace hetero::profile_files
