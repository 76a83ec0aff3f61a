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
// of the prior (and an overhead within a second, kMaxFitOverheadSeconds).
constexpr double kMaxScale = 1e3;

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
    return parse_cache_file("calibration", path, [&] {
        check_format(j, kFormatName, kFormatVersion, "calibration");
        DeviceCalibration c;
        c.key = key_from_json(j.at("key"));
        c.date = j.at("date").get<std::string>();
        c.probe_seconds = j.at("probe_seconds").get<double>();
        c.note = j.value("note", "");
        c.fit = fit_points_from_json(j.at("fit"), "fit", 1 << 20, kMaxScale);
        c.file = path;
        return c;
    });
}

}  // namespace

std::string calibration_dir() { return cache_subdir("calibration"); }

std::optional<DeviceCalibration> load_calibration(const DeviceRef& device, uint32_t dtype) {
    if (calibration_dir().empty()) return std::nullopt;  // no cache directory
    const ProfileKey key = calibration_key(device, dtype);
    const std::string path = calibration_path(key);
    return load_cache_file<DeviceCalibration>(path, key, read_calibration_file, [&](const std::string& difference) {
        // A driver or provider update: measured again (and the file replaced) by this run's probe.
        log(LogLevel::info, fmt::format("calibration {} of {} is stale: {}", path, device.label(), difference));
    });
}

std::string save_calibration(const DeviceCalibration& c) {
    json j = {{"format", kFormatName}, {"version", kFormatVersion},       {"key", key_to_json(c.key)},
              {"date", c.date},        {"probe_seconds", c.probe_seconds}, {"fit", fit_points_to_json(c.fit)}};
    if (!c.note.empty()) j["note"] = c.note;
    const std::string path = calibration_path(c.key);
    write_cache_file(path, j.dump(1) + "\n");
    return path;
}

}  // namespace hetero
