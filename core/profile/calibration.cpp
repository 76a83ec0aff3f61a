// The calibration probe (see calibration.hpp): a fixed small model run on one
// device, its executables timed against the prior, and the prior corrected
// by the fit.
#include "profile_files.hpp"
#include "session_fit.hpp"

#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/profile/calibration.hpp>
#include <hetero/progress.hpp>
#include <hetero/sdk/quant.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

namespace hetero {

namespace fs = std::filesystem;

namespace {

// One Llama-7B layer (its widths, 32 query and 8 KV heads) and an 8k
// vocabulary: matmuls as large as the models people run, so that a GPU's
// launch costs do not hide its bandwidth, at ~150 MB of Q4_0.
RandomModelShape probe_shape() {
    RandomModelShape s;
    s.n_embd = 4096;
    s.n_ff = 11008;
    s.n_layer = 1;
    s.n_head = 32;
    s.n_head_kv = 8;
    s.n_vocab = 8192;
    s.n_ctx = 1024;
    return s;
}
// Bumped when the probe's shape or points change: older files go stale.
// v2: on the host's cores decode is measured over enough layers to stream
// past the last-level cache.
constexpr const char* kProbeName = "probe v2 llama 4096x11008 1 layer vocab 8192";
// Decode, a short prompt and a long one; a point the prior predicts above a
// second is left out (a 2-core CPU stops after 64).
const std::vector<int64_t> kProbePoints = {1, 64, 512};
constexpr uint64_t kProbeMemoryBytes = 1ull << 30;

// The largest CPU cache of the host in bytes (0 when the system does not say).
uint64_t host_cache_bytes() {
    uint64_t best = 0;
    for (int i = 0; i < 8; ++i) {
        const fs::path dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}", i);
        std::ifstream size_file(dir / "size");
        std::string text;
        if (!(size_file >> text) || text.empty()) continue;
        const uint64_t unit = text.back() == 'K' ? 1024 : text.back() == 'M' ? 1024 * 1024 : 1;
        best = std::max<uint64_t>(best, std::strtoull(text.c_str(), nullptr, 10) * unit);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (best == 0) best = uint64_t(std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE)));
#endif
    return best;
}

// The probe model on disk for as long as the probe runs.
struct ProbeFile {
    std::string path;
    ~ProbeFile() {
        std::error_code ec;
        if (!path.empty()) fs::remove(path, ec);
    }
};

std::string describe_fit(const std::vector<SessionFitPoint>& fit) {
    std::string out;
    for (const SessionFitPoint& f : fit)
        out += fmt::format("{}n={}: x{:.2f} {:+.0f} us", out.empty() ? "" : ", ", f.n, f.scale, f.overhead_seconds * 1e6);
    return out;
}

class CalibratedPrior final : public CostModel {
public:
    CalibratedPrior(const std::vector<DeviceRef>& devices, std::vector<std::optional<DeviceCalibration>> calibrations)
        : prior_(devices), calibrations_(std::move(calibrations)), reference_(devices.size(), -1) {
        calibrations_.resize(devices.size());
        const std::vector<int> resource = resource_ids(devices);
        for (size_t d = 0; d < devices.size(); ++d)
            for (size_t r = 0; r < devices.size() && !fit(d); ++r)
                if (fit(r) && resource[r] == resource[d]) {
                    reference_[d] = long(r);
                    break;
                }
    }
    // A device without a calibration on the silicon of a calibrated one
    // (PoCL's CPU device beside the CPU provider) is slowed as much as that
    // one's prior proved optimistic, never sped up: one optimistic prior
    // beside a measured figure would win the cores it shares.
    double node_seconds(size_t d, const OpShape& s) const override {
        const double own = prior_.node_seconds(d, s);
        if (own <= 0) return own;
        if (const auto* c = fit(d)) return own * session_fit_at(*c, s.n).scale;
        if (reference_[d] >= 0) return own * std::max(1.0, session_fit_at(*fit(size_t(reference_[d])), s.n).scale);
        return own;
    }
    double launch_seconds(size_t d) const override { return prior_.launch_seconds(d); }
    double execute_seconds(size_t d, int64_t n) const override {
        const auto* c = fit(d);
        return prior_.launch_seconds(d) + (c ? std::max(0.0, session_fit_at(*c, n).overhead_seconds) : 0.0);
    }
    double transfer_seconds(size_t a, size_t b, uint64_t bytes) const override { return prior_.transfer_seconds(a, b, bytes); }
    double compile_seconds(size_t d) const override {
        const auto& c = calibrations_.at(d);
        return c && c->built_now ? 0.0 : prior_.compile_seconds(d);
    }
    std::string source(size_t d) const override {
        if (!fit(d)) return prior_.source(d);
        const DeviceCalibration& c = *calibrations_[d];
        return fmt::format("prior calibrated by a probe ({}; {})", c.date, describe_fit(c.fit));
    }

private:
    const std::vector<SessionFitPoint>* fit(size_t d) const {
        const auto& c = calibrations_.at(d);
        return c && !c->fit.empty() ? &c->fit : nullptr;
    }
    PriorCostModel prior_;
    std::vector<std::optional<DeviceCalibration>> calibrations_;
    std::vector<long> reference_;  // per device: a calibrated device on its silicon, or -1
};

// The prior's seconds for the probe layer's matmuls on device d at n tokens
// (negative when the device cannot run one).
double probe_matmul_prior(const PriorCostModel& prior, size_t d, uint32_t dtype, int64_t n) {
    const RandomModelShape s = probe_shape();
    const int64_t e = s.n_embd, kv = s.n_embd / s.n_head * s.n_head_kv, f = s.n_ff;
    const std::pair<int64_t, int64_t> mats[] = {{e, e}, {e, kv}, {e, kv}, {e, e}, {e, f}, {e, f}, {f, e}};
    double total = 0;
    for (auto [k, m] : mats) {
        const double t = prior.node_seconds(d, OpShape{HETERO_OP_MATMUL, dtype, n, k, m, 0});
        if (t < 0) return -1;
        total += t;
    }
    return total;
}

// Devices whose prior is hopeless for this dtype: at decode and at prefill
// more than kHopeless times the best device's prior. Probing them would cost
// their builds and seconds of runs (lavapipe: 40 s on a 2-core host) to learn
// what cannot change the plan; even the providers' worst priors (2-3x too
// slow on an H100) stay inside this margin.
constexpr double kHopeless = 4.0;
std::vector<bool> hopeless_devices(const std::vector<DeviceRef>& devices, uint32_t dtype) {
    const PriorCostModel prior(devices);
    std::vector<bool> out(devices.size(), false);
    for (int64_t n : {int64_t(1), kProbePoints[1]}) {
        std::vector<double> t(devices.size());
        double best = -1;
        for (size_t d = 0; d < devices.size(); ++d) {
            t[d] = probe_matmul_prior(prior, d, dtype, n);
            if (t[d] > 0 && (best < 0 || t[d] < best)) best = t[d];
        }
        for (size_t d = 0; d < devices.size(); ++d) {
            const bool bad = t[d] < 0 || (best > 0 && t[d] > kHopeless * best);
            out[d] = n == 1 ? bad : out[d] && bad;
        }
    }
    return out;
}

}  // namespace

int32_t decode_probe_layers(bool on_host, uint64_t layer_bytes, uint64_t cache_bytes) {
    if (!on_host || layer_bytes == 0) return 1;
    return int32_t(std::clamp<uint64_t>((2 * cache_bytes + layer_bytes - 1) / layer_bytes, 1, kMaxDecodeProbeLayers));
}

CalibrationPolicy calibration_policy_from_env() {
    const char* e = std::getenv("HETERO_CALIBRATE");
    const std::string v = e ? e : "";
    if (v.empty() || v == "probe" || v == "1") return CalibrationPolicy::probe;
    if (v == "off" || v == "0") return CalibrationPolicy::off;
    if (v == "cached") return CalibrationPolicy::cached;
    throw Error(fmt::format("HETERO_CALIBRATE='{}': expected probe, cached or off", v));
}

std::optional<uint32_t> probe_dtype(const ModelFile& model) {
    std::map<uint32_t, uint64_t> bytes;
    for (const auto& [name, w] : model.weights)
        if (w.shape.size() == 2 && name.rfind("blk.", 0) == 0) bytes[w.dtype] += w.bytes;
    uint32_t best = 0;
    uint64_t most = 0;
    for (auto [dt, b] : bytes)
        if (b > most) best = dt, most = b;
    if (most == 0) return std::nullopt;
    // F32 matrices are small reference models (a probe layer would be 700 MB).
    if (best == HETERO_DTYPE_F16 || sdk::is_quant_dtype(best)) return best;
    if (best == HETERO_DTYPE_BF16) return uint32_t(HETERO_DTYPE_F16);  // same bytes, the probe cannot write bf16
    return std::nullopt;
}

ProfileKey calibration_key(const DeviceRef& d, uint32_t dtype) {
    ProfileKey k = profile_files::device_key(d);
    k.model_shape = fmt::format("{} {}", kProbeName, sdk::dtype_name(dtype));
    return k;
}

bool calibration_worth_probing(const DeviceRef& d, std::string* why_not) {
    auto no = [&](std::string why) {
        if (why_not) *why_not = std::move(why);
        return false;
    };
    if (!d.provider) return no("a simulated device");
    const hetero_device_props& p = d.props;
    if (p.memory_bytes && p.memory_bytes < kProbeMemoryBytes) return no("too little device memory for the probe model");
    // A device of its own (a discrete GPU) is probed even when its kernels
    // must be built first: leaving it uncalibrated beside calibrated rivals
    // would hand the plan to them, and then nothing would ever build it.
    // On the host's cores a long build buys a device the CPU provider
    // usually beats.
    const bool on_host = p.kind == HETERO_DEVICE_CPU || (p.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY);
    if (on_host && HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint) && p.compile_seconds_hint > kMaxProbeBuildSeconds)
        return no(fmt::format("it runs on the host's cores and its kernels are not built yet (about {:.0f} s); it plans with the bare "
                              "prior, scaled as the host's calibrated device",
                              p.compile_seconds_hint));
    return true;
}

DeviceCalibration calibrate_device(const DeviceRef& device, uint32_t dtype) {
    const auto t0 = std::chrono::steady_clock::now();
    DeviceCalibration c;
    c.key = calibration_key(device, dtype);
    c.date = profile_files::utc_now();
    std::error_code ec;
    fs::create_directories(calibration_dir(), ec);
    if (ec) throw Error(fmt::format("cannot create {}: {}", calibration_dir(), ec.message()));
    ProbeFile file{(fs::path(calibration_dir()) / fmt::format("probe-{}-{}.gguf", sdk::dtype_name(dtype), getpid())).string()};
    write_random_model(file.path, probe_shape(), dtype, 20261127);
    const ModelFile model = load_model(file.path);
    uint64_t layer_bytes = 0;
    for (const auto& [name, w] : model.weights)
        if (name.rfind("blk.", 0) == 0) layer_bytes += w.bytes;
    const bool on_host = device.props.kind == HETERO_DEVICE_CPU || (device.props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY);
    const uint64_t cache_bytes = host_cache_bytes();
    const int32_t decode_layers = decode_probe_layers(on_host, layer_bytes, cache_bytes);
    const std::vector<DeviceRef> devices{device};
    PriorCostModel prior(devices);
    SessionFitOptions fo;
    fo.n_ctx = int32_t(probe_shape().n_ctx);
    fo.max_tokens = int32_t(kProbePoints.back());
    fo.points = kProbePoints;
    fo.target_seconds = 0.2;
    fo.min_runs = 2;
    fo.max_runs = 10;
    ProgressTask progress(fmt::format("calibrating {} (a short probe, once per device and driver)", device.label()), kProbePoints.size(),
                          "points");
    const auto advance = [&](int64_t) { progress.advance(1); };
    try {
        if (decode_layers == 1) {
            c.fit = measure_session_fit(device, model, prior, prior.launch_seconds(0), fo, advance);
        } else {
            // Decode over the deeper model, the prompts over the one layer.
            RandomModelShape deep = probe_shape();
            deep.n_layer = decode_layers;
            ProbeFile deep_file{file.path + ".deep"};
            write_random_model(deep_file.path, deep, dtype, 20261127);
            SessionFitOptions decode = fo, prompts = fo;
            decode.points = {kProbePoints.front()};
            decode.max_tokens = int32_t(kProbePoints.front());
            prompts.points.assign(kProbePoints.begin() + 1, kProbePoints.end());
            c.fit = measure_session_fit(device, load_model(deep_file.path), prior, prior.launch_seconds(0), decode, advance);
            for (const SessionFitPoint& p : measure_session_fit(device, model, prior, prior.launch_seconds(0), prompts, advance))
                c.fit.push_back(p);
            c.note = fmt::format("decode measured over {} layers (the host's caches hold {} MiB)", decode_layers, cache_bytes >> 20);
        }
    } catch (const Error& e) {
        // A device that cannot run a whole layer (an NPU taking matmuls only)
        // keeps the bare prior; stored so that later runs do not try again.
        c.fit.clear();
        c.note = e.what();
    }
    c.probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
}

std::unique_ptr<CostModel> make_calibrated_prior(const std::vector<DeviceRef>& devices,
                                                 std::vector<std::optional<DeviceCalibration>> calibrations) {
    return std::make_unique<CalibratedPrior>(devices, std::move(calibrations));
}

std::vector<std::optional<DeviceCalibration>> calibrations_for(const std::vector<DeviceRef>& devices, const ModelFile& model,
                                                               const std::vector<bool>& profiled, CalibrationPolicy policy,
                                                               std::vector<std::string>* notes) {
    std::vector<std::optional<DeviceCalibration>> out(devices.size());
    const std::optional<uint32_t> dtype = probe_dtype(model);
    if (policy == CalibrationPolicy::off || !dtype) return out;
    auto note = [&](std::string line) {
        log(LogLevel::info, line);
        if (notes) notes->push_back(std::move(line));
    };
    std::vector<bool> hopeless;
    for (size_t d = 0; d < devices.size(); ++d) {
        if (d < profiled.size() && profiled[d]) continue;
        out[d] = load_calibration(devices[d], *dtype);
        std::string why_not;
        if (out[d] || policy != CalibrationPolicy::probe) continue;
        if (hopeless.empty()) hopeless = hopeless_devices(devices, *dtype);
        if (hopeless[d]) {
            log(LogLevel::info, fmt::format("{}: not calibrated: its prior is over {}x the best device's", devices[d].label(), kHopeless));
            continue;
        }
        if (calibration_dir().empty()) {
            note(fmt::format("{} not calibrated: no cache directory to keep it in (neither XDG_CACHE_HOME nor HOME is set)",
                             devices[d].label()));
            continue;
        }
        if (!calibration_worth_probing(devices[d], &why_not)) {
            note(fmt::format("{} not calibrated: {}", devices[d].label(), why_not));
            continue;
        }
        try {
            DeviceCalibration c = calibrate_device(devices[d], *dtype);
            c.file = save_calibration(c);
            c.built_now = true;
            if (c.fit.empty())
                note(fmt::format("{} cannot run the calibration probe ({}); it plans with the bare prior", devices[d].label(), c.note));
            else
                note(fmt::format("{} calibrated in {:.1f} s, once per device and driver ({}{}; {})", devices[d].label(), c.probe_seconds,
                                 describe_fit(c.fit), c.note.empty() ? "" : "; " + c.note, c.file));
            out[d] = std::move(c);
        } catch (const Error& e) {
            log(LogLevel::warn, fmt::format("{}: calibration probe failed, planning with the bare prior: {}", devices[d].label(), e.what()));
        }
    }
    return out;
}

}  // namespace hetero
