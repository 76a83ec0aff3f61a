// The calibration cache: one small JSON file per device, driver, provider
// version and probe dtype (calibration.hpp).
#include "profile_files.hpp"

#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/profile/calibration.hpp>
#include <hetero/sdk/hash.hpp>

#include "../util/json_strict.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

namespace hetero {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace profile_files;

namespace {

constexpr const char* kFormatName = "hetero-calibration";
constexpr int kFormatVersion = 1;
constexpr uint64_t kMaxFileBytes = 1u << 20;  // real ones are a few hundred bytes
// A fit point the planner can trust: scale within three orders of magnitude
// of the prior, an overhead within a second.
constexpr double kMaxScale = 1e3, kMaxOverheadSeconds = 1.0;

std::string calibration_path(const ProfileKey& key) {
    const std::string identity = key.provider + '\n' + key.device_name + '\n' + key.model_shape;
    const std::string dtype = key.model_shape.substr(key.model_shape.rfind(' ') + 1);
    return (fs::path(require_cache_subdir("calibration")) / fmt::format("{}-{}-{}-{:016x}.json", sanitise(key.provider, 16), sanitise(key.device_name, 48),
                                                      sanitise(dtype, 8), sdk::fnv1a(identity)))
        .string();
}

DeviceCalibration read_calibration_file(const std::string& path) {
    const json j = json_detail::parse_json_strict(read_small_file(path, kMaxFileBytes, "calibration"),
                                                  fmt::format("calibration {} is not valid", path));
    try {
        if (j.at("format").get<std::string>() != kFormatName) throw Error("not a hetero calibration");
        if (const int v = j.at("version").get<int>(); v != kFormatVersion)
            throw Error(fmt::format("format version {} (this build reads {})", v, kFormatVersion));
        DeviceCalibration c;
        c.key = key_from_json(j.at("key"));
        c.date = j.at("date").get<std::string>();
        c.probe_seconds = j.at("probe_seconds").get<double>();
        c.note = j.value("note", "");
        for (const auto& f : j.at("fit")) {
            const SessionFitPoint pt{f.at("n").get<int64_t>(), f.at("scale").get<double>(), f.at("overhead_seconds").get<double>()};
            if (pt.n < 1 || pt.n > (1 << 20) || !(pt.scale > 0 && pt.scale <= kMaxScale) || !std::isfinite(pt.overhead_seconds) ||
                std::abs(pt.overhead_seconds) > kMaxOverheadSeconds)
                throw Error(fmt::format("fit: bad point n={} scale={} overhead={}", pt.n, pt.scale, pt.overhead_seconds));
            if (!c.fit.empty() && pt.n <= c.fit.back().n) throw Error("fit: points are not in ascending order");
            c.fit.push_back(pt);
        }
        c.file = path;
        return c;
    } catch (const json::exception& e) {
        throw Error(fmt::format("calibration {} is not valid: {}", path, e.what()));
    } catch (const Error& e) {
        throw Error(fmt::format("calibration {} is not valid: {}", path, e.what()));
    }
}

}  // namespace

std::string calibration_dir() { return cache_subdir("calibration"); }

std::optional<DeviceCalibration> load_calibration(const DeviceRef& device, uint32_t dtype) {
    if (calibration_dir().empty()) return std::nullopt;  // no cache directory
    const ProfileKey key = calibration_key(device, dtype);
    const std::string path = calibration_path(key);
    if (!cache_file_present(path)) return std::nullopt;
    DeviceCalibration c;
    try {
        c = read_calibration_file(path);
    } catch (const Error& e) {
        log(LogLevel::warn, fmt::format("{}; ignoring it", e.what()));
        return std::nullopt;
    }
    if (!(c.key == key)) {
        // A driver or provider update: measured again (and the file replaced) by this run's probe.
        log(LogLevel::info, fmt::format("calibration {} of {} is stale: {}", path, device.label(), key_difference(c.key, key)));
        return std::nullopt;
    }
    return c;
}

std::string save_calibration(const DeviceCalibration& c) {
    json fit = json::array();
    for (const SessionFitPoint& f : c.fit) fit.push_back({{"n", f.n}, {"scale", f.scale}, {"overhead_seconds", f.overhead_seconds}});
    json j = {{"format", kFormatName}, {"version", kFormatVersion}, {"key", key_to_json(c.key)},
              {"date", c.date},        {"probe_seconds", c.probe_seconds}, {"fit", fit}};
    if (!c.note.empty()) j["note"] = c.note;
    const std::string path = calibration_path(c.key);
    write_cache_file(path, j.dump(1) + "\n");
    return path;
}

}  // namespace hetero
