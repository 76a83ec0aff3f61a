// A device's a-priori figures checked by a short measured probe, before any
// profile exists. A small model of fixed shape (one Llama-7B-sized layer, an
// 8k vocabulary, random weights of the dtype the run's model mostly uses)
// runs on the device alone, and its executables are timed against what the
// prior predicts for their nodes. The fit (per chunk size: a scale on the
// prior's node times and an overhead per execute, as a profile's session fit)
// is cached per device, driver, provider version and dtype, and the prior is
// corrected by it wherever no profile exists.
//
//   calibrate_device()   measures   (core/profile/calibration.cpp)
//   load_calibration(),
//   save_calibration()   the cache  (core/profile/calibration_store.cpp)
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/profile/profile.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero {

// When a run may measure: `off` plans with the bare prior (tests that must
// not depend on timing), `cached` uses what earlier probes stored, `probe`
// also measures devices without a stored calibration whose kernels are
// cheap to build (see calibration_worth_probing).
enum class CalibrationPolicy { off, cached, probe };
// HETERO_CALIBRATE: "off" or "0" -> off, "cached" -> cached, unset or
// "probe" -> probe; anything else is an error naming the value.
CalibrationPolicy calibration_policy_from_env();

// Layers of the probe's decode model: one, or on a device that runs on the
// host's cores (on_host) enough to hold twice the host's largest cache, so
// that decode streams its weights from memory as a real model's do (at most
// kMaxDecodeProbeLayers). One 7B layer (145 MiB of Q4_0 with the head) stays
// in a 300 MiB L3: the probe then decoded 2.7x faster per byte than a 1.1B
// model on the same Xeon, and the calibrated prior was 56 % off.
inline constexpr uint64_t kMaxDecodeProbeLayers = 16;
int32_t decode_probe_layers(bool on_host, uint64_t layer_bytes, uint64_t cache_bytes);

struct DeviceCalibration {
    ProfileKey key;  // model_shape names the probe and its dtype
    std::string date;
    double probe_seconds = 0;  // wall time of the probe, model writing included
    // Ascending n; empty when the device could not run the probe (`note` says
    // why), which is kept so that every run does not try again.
    std::vector<SessionFitPoint> fit;
    std::string note;  // why there is no fit, or how it was measured
    std::string file;  // where it was loaded from or saved to
    // The probe ran in this process: the device's kernels are built and held
    // by its provider now, so a plan made after it owes no compile cost.
    bool built_now = false;
};

// The dtype the probe model uses for `model`: the matmul dtype holding the
// most bytes (bf16 probed as f16); nullopt for f32 models (small reference
// models, whose probe layer would be 700 MB) and dtypes the probe cannot write.
std::optional<uint32_t> probe_dtype(const ModelFile& model);

// $XDG_CACHE_HOME/hetero/calibration, else ~/.cache/hetero/calibration.
std::string calibration_dir();
ProfileKey calibration_key(const DeviceRef& device, uint32_t dtype);

// The stored calibration of this device and dtype; a corrupt or stale file is
// ignored with one warning naming it.
std::optional<DeviceCalibration> load_calibration(const DeviceRef& device, uint32_t dtype);
// Writes the file atomically and returns its path.
std::string save_calibration(const DeviceCalibration& calibration);

// Whether to probe `device`: it has the memory, and either its one-off
// builds (the provider's compile hint) take at most kMaxProbeBuildSeconds or
// it is silicon of its own (a discrete GPU: its build is paid in the probe,
// once, as the run that uses it would pay it). A device on the host's cores
// with a long build (PoCL's CPU device, cold) is not probed.
bool calibration_worth_probing(const DeviceRef& device, std::string* why_not = nullptr);
inline constexpr double kMaxProbeBuildSeconds = 5.0;

// Runs the probe on `device` (seconds: a probe model is written to a
// temporary file, run at decode and at two prefill sizes, and removed). A
// device that cannot run the probe model gets a calibration with an empty
// fit and a note; other failures throw hetero::Error.
DeviceCalibration calibrate_device(const DeviceRef& device, uint32_t dtype);

// The prior (PriorCostModel) corrected per device by its calibration's fit:
// node times times the fit's scale at the node's n, executes plus its
// overhead. A device without one on the silicon of a calibrated device takes
// that device's scale where it slows (max(1, scale)); others keep the bare prior.
std::unique_ptr<CostModel> make_calibrated_prior(const std::vector<DeviceRef>& devices,
                                                 std::vector<std::optional<DeviceCalibration>> calibrations);

// For each device of `devices` without a profile (`profiled[d]` false): its
// calibration under `policy`, probing where allowed: devices whose prior for
// the probe layer is within 4x of the best device's, at decode or prefill,
// and whose builds are cheap (calibration_worth_probing). What was probed or
// skipped for a reason a user can act on is added to `notes` (may be null).
std::vector<std::optional<DeviceCalibration>> calibrations_for(const std::vector<DeviceRef>& devices, const ModelFile& model,
                                                               const std::vector<bool>& profiled, CalibrationPolicy policy,
                                                               std::vector<std::string>* notes);

}  // namespace hetero
