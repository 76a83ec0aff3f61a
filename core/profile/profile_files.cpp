// What the profile and calibration caches share (profile_files.hpp).
#include "profile_files.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>

#include "../model/mapped_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>

namespace hetero {

namespace fs = std::filesystem;
using nlohmann::json;

namespace profile_files {

std::string sanitise(const std::string& s, size_t max_len) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        if (ok) out += c;
        else if (!out.empty() && out.back() != '_') out += '_';
        if (out.size() >= max_len) break;
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out.empty() ? "x" : out;
}

json key_to_json(const ProfileKey& k) {
    return {{"provider", k.provider},   {"provider_version", k.provider_version}, {"device_name", k.device_name},
            {"driver", k.driver},       {"compute_units", k.compute_units},       {"model_shape", k.model_shape}};
}

ProfileKey key_from_json(const json& j) {
    ProfileKey k;
    k.provider = j.at("provider").get<std::string>();
    k.provider_version = j.at("provider_version").get<std::string>();
    k.device_name = j.at("device_name").get<std::string>();
    k.driver = j.at("driver").get<std::string>();
    k.compute_units = j.at("compute_units").get<uint32_t>();
    k.model_shape = j.at("model_shape").get<std::string>();
    return k;
}

std::string key_difference(const ProfileKey& stored, const ProfileKey& now) {
    std::string out;
    auto cmp = [&](const char* field, const std::string& a, const std::string& b) {
        if (a != b) out += fmt::format("{}{} was '{}', now '{}'", out.empty() ? "" : "; ", field, a, b);
    };
    cmp("provider", stored.provider, now.provider);
    cmp("provider version", stored.provider_version, now.provider_version);
    cmp("device", stored.device_name, now.device_name);
    cmp("driver", stored.driver, now.driver);
    cmp("compute units", std::to_string(stored.compute_units), std::to_string(now.compute_units));
    cmp("model shape", stored.model_shape, now.model_shape);
    return out;
}

std::string read_small_file(const std::string& path, uint64_t max_bytes, const char* what) {
    const model_detail::MappedFile map(path);
    if (map.size() > max_bytes) throw Error(fmt::format("{}: {} bytes; a {} is at most {} bytes", path, map.size(), what, max_bytes));
    return std::string(reinterpret_cast<const char*>(map.data()), size_t(map.size()));
}

std::string cache_subdir(const char* name) { return sdk::user_cache_dir(name); }

std::string require_cache_subdir(const char* name) {
    std::string dir = cache_subdir(name);
    if (dir.empty()) throw Error(fmt::format("no cache directory for {}: neither XDG_CACHE_HOME nor HOME is set", name));
    return dir;
}

ProfileKey device_key(const DeviceRef& d) {
    ProfileKey k;
    k.provider = d.provider ? d.provider->name() : "?";
    k.provider_version = d.provider && d.provider->api().version ? d.provider->api().version : "";
    k.device_name = d.props.name;
    k.driver = d.props.driver;
    k.compute_units = d.props.compute_units;
    return k;
}

bool cache_file_present(const std::string& path) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(path, ec));
}

void write_cache_file(const std::string& path, const std::string& text) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) throw Error(fmt::format("cannot create {}: {}", fs::path(path).parent_path().string(), ec.message()));
    if (std::string e = sdk::write_file_atomically(path, text); !e.empty()) throw Error(e);
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

json fit_points_to_json(const std::vector<SessionFitPoint>& fit) {
    json out = json::array();
    for (const SessionFitPoint& f : fit) out.push_back({{"n", f.n}, {"scale", f.scale}, {"overhead_seconds", f.overhead_seconds}});
    return out;
}

std::vector<SessionFitPoint> fit_points_from_json(const json& j, const char* what, int64_t max_n, double max_scale) {
    std::vector<SessionFitPoint> fit;
    for (const auto& f : j) {
        const SessionFitPoint pt{f.at("n").get<int64_t>(), f.at("scale").get<double>(), f.at("overhead_seconds").get<double>()};
        if (pt.n < 1 || pt.n > max_n || !(pt.scale > 0 && pt.scale <= max_scale) || !std::isfinite(pt.overhead_seconds) ||
            std::abs(pt.overhead_seconds) > kMaxFitOverheadSeconds)
            throw Error(fmt::format("{}: bad point n={} scale={} overhead={}", what, pt.n, pt.scale, pt.overhead_seconds));
        if (!fit.empty() && pt.n <= fit.back().n) throw Error(fmt::format("{}: points are not in ascending order", what));
        fit.push_back(pt);
    }
    return fit;
}

void check_format(const json& j, const char* name, int version, const char* what) {
    if (j.at("format").get<std::string>() != name) throw Error(fmt::format("not a hetero {}", what));
    if (const int v = j.at("version").get<int>(); v != version)
        throw Error(fmt::format("format version {} (this build reads {})", v, version));
}

}  // namespace profile_files

}  // namespace hetero
