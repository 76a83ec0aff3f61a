// The profile cache: keys, file names and the JSON format. One file per
// device and model shape under the user's cache directory.
#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/sdk/quant.hpp>

#include "profile_files.hpp"

#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>
#include <hetero/sdk/hash.hpp>

#include "../model/mapped_file.hpp"
#include "../util/json_strict.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <unistd.h>

namespace hetero {

namespace fs = std::filesystem;
using nlohmann::json;


using namespace profile_files;

namespace {

// Bumped when the layout below changes; older files are then reported stale.
constexpr int kFormatVersion = 3;  // 2: layer_scale; 3: session_fit
constexpr const char* kFormatName = "hetero-profile";

// What a measured profile can hold. A cache file is input like any other:
// a value past these bounds is damage or an edit, and taken as it is it
// would move every plan made with it (1e308 s launches, negative compiles).
constexpr uint64_t kMaxProfileBytes = 16u << 20;   // real ones are tens of KiB
constexpr double kMaxOpSeconds = 3600;             // one op, one transfer, one compile
constexpr double kMaxLaunchSeconds = 1;            // submission plus one synchronisation
constexpr double kMaxBytesPerSecond = 1e13;        // 10 TB/s: above any memory or bus
constexpr double kMaxProfileSeconds = 1e6;         // wall time of the measuring
constexpr double kMaxLayerScale = 1e3;             // measured over predicted seconds
constexpr int64_t kMaxGridX = int64_t(1) << 30;    // tokens or cache rows

// `v` in [lo, hi] (finite), else hetero::Error naming `what` and the value;
// `open_low` makes the lower bound exclusive.
double checked(double v, double lo, double hi, const std::string& what, bool open_low = false) {
    const bool low_ok = open_low ? v > lo : v >= lo;
    if (!(low_ok && v <= hi && std::isfinite(v)))
        throw Error(fmt::format("{} = {} is out of range {}{}, {}]", what, v, open_low ? "(" : "[", lo, hi));
    return v;
}

int64_t checked_x(int64_t x, const std::string& what) {
    if (x < 1 || x > kMaxGridX) throw Error(fmt::format("{} = {} is out of range [1, {}]", what, x, kMaxGridX));
    return x;
}

json table_to_json(const ProfileTable& t) {
    json points = json::array(), held = json::array();
    for (const auto& p : t.points) points.push_back({p.x, p.seconds});
    for (const auto& h : t.held_out) held.push_back({h.x, h.seconds, h.predicted});
    return {{"points", points}, {"held_out", held}};
}

// Throws hetero::Error (via the caller's catch) on anything malformed;
// `max_value` bounds the second column (seconds, or a ratio for layer_scale).
ProfileTable table_from_json(const json& j, const std::string& where, double max_value = kMaxOpSeconds) {
    ProfileTable t;
    for (const auto& p : j.at("points")) {
        const std::string what = fmt::format("{} point {}", where, t.points.size());
        ProfilePoint pt{checked_x(p.at(0).get<int64_t>(), what + " x"), checked(p.at(1).get<double>(), 0, max_value, what + " value", true)};
        if (!t.points.empty() && pt.x <= t.points.back().x) throw Error(where + ": points are not in ascending order");
        t.points.push_back(pt);
    }
    for (const auto& h : j.at("held_out")) {
        const std::string what = fmt::format("{} held-out point {}", where, t.held_out.size());
        HeldOutPoint hp{checked_x(h.at(0).get<int64_t>(), what + " x"), checked(h.at(1).get<double>(), 0, max_value, what + " value", true),
                        checked(h.at(2).get<double>(), -max_value, max_value, what + " prediction")};
        t.held_out.push_back(hp);
    }
    return t;
}

json fit_to_json(const TransferFit& f) {
    json points = json::array();
    for (const auto& [bytes, s] : f.points) points.push_back({bytes, s});
    return {{"latency_seconds", f.latency_seconds}, {"bytes_per_second", f.bytes_per_second}, {"points", points}};
}

TransferFit fit_from_json(const json& j, const std::string& where) {
    TransferFit f;
    f.latency_seconds = checked(j.at("latency_seconds").get<double>(), 0, kMaxLaunchSeconds, where + " latency_seconds");
    f.bytes_per_second = checked(j.at("bytes_per_second").get<double>(), 0, kMaxBytesPerSecond, where + " bytes_per_second", true);
    for (const auto& p : j.at("points"))
        f.points.emplace_back(p.at(0).get<uint64_t>(), checked(p.at(1).get<double>(), 0, kMaxOpSeconds, where + " point seconds"));
    return f;
}

}  // namespace

std::string ProfileKey::str() const {
    return fmt::format("provider={} version={} device='{}' driver='{}' compute_units={} model='{}'", provider, provider_version,
                       device_name, driver, compute_units, model_shape);
}

std::string model_shape_summary(const ModelFile& model) {
    const LlamaHParams& hp = model.hparams;
    // Matrix name with the layer folded away -> the dtypes its layers use.
    std::map<std::string, std::set<std::string>> dtypes;
    for (const auto& [name, w] : model.weights) {
        if (w.shape.size() != 2) continue;
        std::string n = name;
        if (n.rfind("blk.", 0) == 0) n = n.substr(n.find('.', 4) + 1);
        if (const size_t dot = n.rfind(".weight"); dot != std::string::npos && dot + 7 == n.size()) n.resize(dot);
        dtypes[n].insert(sdk::dtype_name(w.dtype));
    }
    std::string mats;
    for (const auto& [n, set] : dtypes) {
        std::string ts;
        for (const auto& t : set) ts += (ts.empty() ? "" : "/") + t;
        mats += fmt::format(" {}={}", n, ts);
    }
    return fmt::format("{} n_embd={} n_layer={} n_head={} n_head_kv={} head_dim={} rope_dims={} n_ff={} n_vocab={}{}{}", hp.arch,
                       hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.head_dim, hp.rope_dims, hp.n_ff, hp.n_vocab,
                       hp.tied_output ? " tied" : "", mats);
}

ProfileKey profile_key(const DeviceRef& d, const ModelFile& model) {
    ProfileKey k = device_key(d);
    k.model_shape = model_shape_summary(model);
    return k;
}

std::string profile_cache_dir() { return cache_subdir("profiles"); }

std::string profile_path(const ProfileKey& key) {
    const std::string dir = require_cache_subdir("profiles");
    const std::string identity = key.provider + '\n' + key.device_name + '\n' + key.model_shape;
    const std::string arch = key.model_shape.substr(0, key.model_shape.find(' '));
    const std::string name = fmt::format("{}-{}-{}-{:016x}.json", sanitise(key.provider, 16), sanitise(key.device_name, 48),
                                         sanitise(arch, 16), sdk::fnv1a(identity));
    return (fs::path(dir) / name).string();
}

// The file's text: a regular file of at most kMaxProfileBytes (a FIFO or a
// link to /dev/zero must neither hang nor fill memory).
std::string read_profile_text(const std::string& path) { return read_small_file(path, kMaxProfileBytes, "profile"); }

DeviceProfile read_profile_file(const std::string& path) {
    std::string text;
    try {
        text = read_profile_text(path);
    } catch (const Error& e) {
        throw Error(fmt::format("cannot read profile {}", e.what()));
    }
    // A repeated key is an error, not "the last one wins".
    const json j = json_detail::parse_json_strict(text, fmt::format("profile {} is not valid", path));
    return parse_cache_file("profile", path, [&] {
        check_format(j, kFormatName, kFormatVersion, "profile");
        DeviceProfile p;
        p.key = key_from_json(j.at("key"));
        p.date = j.at("date").get<std::string>();
        p.n_ctx = int32_t(checked_x(j.at("n_ctx").get<int32_t>(), "n_ctx"));
        p.max_tokens = int32_t(checked_x(j.at("max_tokens").get<int32_t>(), "max_tokens"));
        p.profile_seconds = checked(j.at("profile_seconds").get<double>(), 0, kMaxProfileSeconds, "profile_seconds");
        p.launch_seconds = checked(j.at("launch_seconds").get<double>(), 0, kMaxLaunchSeconds, "launch_seconds", true);
        p.write = fit_from_json(j.at("transfer").at("write"), "transfer.write");
        p.read = fit_from_json(j.at("transfer").at("read"), "transfer.read");
        p.first_compile_seconds = checked(j.at("first_compile_seconds").get<double>(), 0, kMaxOpSeconds, "first_compile_seconds");
        p.compile_seconds = checked(j.at("compile_seconds").get<double>(), 0, kMaxOpSeconds, "compile_seconds");
        for (const auto& [family, fj] : j.at("families").items()) {
            FamilyProfile f;
            f.by_n = table_from_json(fj.at("by_n"), family + " by_n");
            if (fj.contains("by_kv")) f.by_kv = table_from_json(fj.at("by_kv"), family + " by_kv");
            if (f.by_n.empty() && f.by_kv.empty()) throw Error(family + ": no points");
            p.families[family] = std::move(f);
        }
        if (p.families.empty()) throw Error("no op families");
        if (j.contains("layer_scale")) p.layer_scale = table_from_json(j.at("layer_scale"), "layer_scale", kMaxLayerScale);
        if (j.contains("session_fit")) p.session_fit = fit_points_from_json(j.at("session_fit"), "session_fit", kMaxGridX, kMaxLayerScale);
        p.file = path;
        return p;
    });
}

std::optional<DeviceProfile> load_profile(const DeviceRef& device, const ModelFile& model) {
    if (profile_cache_dir().empty()) return std::nullopt;  // no cache: plans use priors
    const ProfileKey key = profile_key(device, model);
    const std::string path = profile_path(key);
    return load_cache_file<DeviceProfile>(path, key, read_profile_file, [&](const std::string& difference) {
        log(LogLevel::warn, fmt::format("ignoring stale profile {} of {}: {}", path, device.label(), difference));
    });
}

std::string save_profile(const DeviceProfile& p) {
    json families = json::object();
    for (const auto& [name, f] : p.families) {
        json fj = {{"by_n", table_to_json(f.by_n)}};
        if (!f.by_kv.empty()) fj["by_kv"] = table_to_json(f.by_kv);
        families[name] = fj;
    }
    json j = {{"format", kFormatName},
                    {"version", kFormatVersion},
                    {"key", key_to_json(p.key)},
                    {"date", p.date},
                    {"n_ctx", p.n_ctx},
                    {"max_tokens", p.max_tokens},
                    {"profile_seconds", p.profile_seconds},
                    {"launch_seconds", p.launch_seconds},
                    {"transfer", {{"write", fit_to_json(p.write)}, {"read", fit_to_json(p.read)}}},
                    {"first_compile_seconds", p.first_compile_seconds},
                    {"compile_seconds", p.compile_seconds},
                    {"families", families}};
    if (!p.layer_scale.empty()) j["layer_scale"] = table_to_json(p.layer_scale);
    if (!p.session_fit.empty()) j["session_fit"] = fit_points_to_json(p.session_fit);
    const std::string path = profile_path(p.key);
    write_cache_file(path, j.dump(1) + "\n");
    return path;
}

}  // namespace hetero
