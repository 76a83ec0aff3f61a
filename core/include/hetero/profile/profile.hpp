// The profiler's real-execution mode (HeteroLLM's profiler): what each op
// family of a model costs on a device, measured by running one-node graphs
// through the provider at token counts n = 1, 2, 4, ... (and, for decode
// attention, at cache lengths kv), cached as JSON per device and model shape,
// and offered to the partition solver as a CostModel that interpolates the
// tables piecewise-linearly.
//
//   profile_device()     measures        (core/profile/profiler.cpp)
//   load_profile(),
//   save_profile()       the JSON cache  (core/profile/profile_store.cpp)
//   ProfiledCostModel    the predictor   (core/profile/profiled_cost_model.cpp)
//   describe_profile()   for humans      (core/profile/profile_report.cpp)
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/plan.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetero {

// What a profile's figures depend on. A cached profile is used only when
// every field equals the current one; the cache file's name comes from the
// identity fields (provider, device_name, model_shape) alone, so a driver,
// provider or thread-count change finds the old file, reports it stale and
// replaces it instead of leaving it behind.
struct ProfileKey {
    std::string provider;          // "cpu"
    std::string provider_version;  // hetero_ep_api::version
    std::string device_name;       // hetero_device_props::name
    std::string driver;            // hetero_device_props::driver
    uint32_t compute_units = 0;    // the CPU provider reports its thread count here
    std::string model_shape;       // model_shape_summary()

    bool operator==(const ProfileKey&) const = default;
    std::string str() const;  // every field, one line
};

// What op costs depend on: arch, widths, layer/head counts, vocabulary and the
// dtype of every matrix (blk.N. folded; mixed per-layer dtypes listed as a/b).
std::string model_shape_summary(const ModelFile& model);
ProfileKey profile_key(const DeviceRef& device, const ModelFile& model);

// $XDG_CACHE_HOME/hetero/profiles, else ~/.cache/hetero/profiles; "" when
// neither variable is set: no profile is then read, and saving one fails.
std::string profile_cache_dir();
// The cache file of a key: <cache dir>/<provider>-<device>-<arch>-<hash>.json
// (sanitised; the hash is of the identity fields).
std::string profile_path(const ProfileKey& key);

// seconds(bytes) = latency + bytes / bandwidth, fitted to blocking
// buffer_write / buffer_read calls of 4 KiB .. 64 MiB.
struct TransferFit {
    double latency_seconds = 0;
    double bytes_per_second = 0;
    std::vector<std::pair<uint64_t, double>> points;  // (bytes, median seconds) measured
    double seconds(uint64_t bytes) const;
};

struct ProfilePoint {
    int64_t x = 0;  // n (tokens) or kv (cache rows attended)
    double seconds = 0;
};

struct HeldOutPoint {
    int64_t x = 0;
    double seconds = 0;    // measured
    double predicted = 0;  // by the table, which does not contain this point
    double rel_error() const;  // |predicted - seconds| / seconds
};

// Seconds along one axis, as measured.
struct ProfileTable {
    std::vector<ProfilePoint> points;  // ascending x
    std::vector<HeldOutPoint> held_out;
    // Piecewise-linear between points; beyond either end the nearest
    // segment's line continues (floored at kMinNodeSeconds). One point: that
    // value. Negative when the table is empty.
    double predict(double x) const;
    bool empty() const { return points.empty(); }
};

// A node's own time never goes below this (its measured round trip minus the
// launch cost can be zero or negative when the op is tiny).
inline constexpr double kMinNodeSeconds = 1e-7;

struct FamilyProfile {
    ProfileTable by_n;   // n tokens; attention: a prefill chunk at position 0 (query i attends to i+1 rows)
    ProfileTable by_kv;  // attention only: one token attending to kv cache rows (decode)
};

// How a session's executables compare with the tables at n tokens: an
// executable whose nodes the tables (layer_scale applied) predict at S seconds
// measures launch_seconds + overhead_seconds + scale * S. Fitted to a real
// session on the device alone (every layer and the head, as a single-device
// plan runs them): its layers executable and its head executable, at a few
// prefill chunk sizes and at decode. It holds what one-node and one-layer
// graphs cannot show: the session's host work per execute (binding tables,
// waking the provider's threads) and per node across many layers.
struct SessionFitPoint {
    int64_t n = 0;  // tokens of the chunk (1: decode)
    double scale = 1;
    double overhead_seconds = 0;  // may be negative: the launch test costs more than a session's execute
};
// Linear in n between points, the end values beyond them; {1, 0} when empty.
SessionFitPoint session_fit_at(const std::vector<SessionFitPoint>& fit, int64_t n);

struct DeviceProfile {
    ProfileKey key;
    std::string date;           // when it was measured, UTC, ISO 8601
    int32_t n_ctx = 0;          // context: the caches' rows, the top of the kv grid
    int32_t max_tokens = 0;     // top of the n grid
    double profile_seconds = 0; // wall time the measuring took
    // Median execute + event_wait round trip of a one-node executable of
    // trivial work: submission plus one synchronisation.
    double launch_seconds = 0;
    TransferFit write;  // host -> device (buffer_write)
    TransferFit read;   // device -> host (buffer_read)
    // The first compile of the profiling run (pays the provider's kernel or
    // program builds), and the median of the later ones (one executable each).
    // A provider that caches its builds on disk (the OpenCL provider does)
    // makes the first profile record the cold build and later sessions pay
    // less; `hetero profile --force` then records the warm figure.
    double first_compile_seconds = 0;
    double compile_seconds = 0;
    std::map<std::string, FamilyProfile> families;  // by OpShape::family()
    // Whole layers against their nodes: at n tokens, the measured seconds of
    // one layer compiled as one executable (as the session runs it) over the
    // sum of its nodes' table predictions. Providers fuse nodes and pipeline
    // kernels inside an executable, which one-node graphs cannot show; node
    // predictions are multiplied by this ratio. Empty: not measured (1).
    ProfileTable layer_scale;
    // See SessionFitPoint; ascending n. Empty: not measured.
    std::vector<SessionFitPoint> session_fit;
    std::string file;  // where it was loaded from or saved to (not stored in the file)
};

// Median and max relative error of the held-out points of a profile whose
// measured time is at least min_seconds (0: all of them; ops far below the
// launch cost have large relative errors that cost the solver nothing).
struct HeldOutSummary {
    size_t count = 0;
    double median = 0, max = 0;
    std::string worst;  // "matmul q8_0 k=64 m=64 n=48"
};
HeldOutSummary held_out_summary(const DeviceProfile& profile, double min_seconds = 0);
// "median 2.1 %, max 85 % (store_rows f32 w=256 n=12) over 63 points; above 10us: ..."
std::string describe_held_out(const DeviceProfile& profile);

struct ProfileOptions {
    int32_t n_ctx = 0;       // 0 = the context a session would pick (context_length)
    int32_t max_tokens = 0;  // caps the n grid below the context; 0 = no further cap
    // Per point: repeat until target_seconds have passed or max_runs, never
    // fewer than min_runs (after one warm-up run); the median counts.
    double target_seconds = 0.3;
    int min_runs = 3, max_runs = 20;
};

// The n grid's top for these options: min(context, max_tokens).
int32_t profile_token_cap(const ModelFile& model, const ProfileOptions& options);

struct ProfileProgress {
    std::string device;   // "cpu:0"
    std::string stage;    // "launch", "transfer write", "transfer read" or an op family
    std::string axis;     // "n", "kv", "bytes" or ""
    int64_t x = 0;        // the point being measured
    double fraction = 0;  // of this device's profile done, 0..1
};
using ProfileProgressFn = std::function<void(const ProfileProgress&)>;

// Measures every op family of the model's graph on one device (see the
// header comment); throws hetero::Error when the device fails outside a
// single point (a point that fails ends its table there, with a warning).
// With `base`, the device's cached profile of this model for fewer tokens or
// a shorter context, only what lies beyond it is measured (token counts above
// its max_tokens, cache lengths above its n_ctx) and the rest is kept: a
// longer prompt or context extends a profile instead of redoing it.
DeviceProfile profile_device(const DeviceRef& device, const ModelFile& model, const ProfileOptions& options,
                             const ProfileProgressFn& progress = {}, const DeviceProfile* base = nullptr);

// The cached profile of this device and model, or nullopt when there is none.
// A file that cannot be read or parsed, or whose key differs from the current
// one (stale), is ignored with exactly one warning naming the file and why.
std::optional<DeviceProfile> load_profile(const DeviceRef& device, const ModelFile& model);
// Reads one profile file; throws hetero::Error naming the file and the fault.
DeviceProfile read_profile_file(const std::string& path);
// Writes profile_path(profile.key) (a temporary file, then a rename) and
// returns the path.
std::string save_profile(const DeviceProfile& profile);

// Measured tables where a profile has the family, `fallback` for everything
// else: devices without a profile, families the profile lacks. `devices`,
// `profiles` and the fallback's device indices are parallel.
class ProfiledCostModel : public CostModel {
public:
    // fallback may be null only when every device has a profile covering
    // every family it will be asked about (node_seconds throws otherwise).
    ProfiledCostModel(std::vector<DeviceRef> devices, std::vector<std::optional<DeviceProfile>> profiles,
                      const CostModel* fallback);

    // Attention with n == 1 reads the kv table (when measured), every other
    // shape the n table; both times layer_scale and the session fit's scale.
    double node_seconds(size_t device, const OpShape& shape) const override;
    double launch_seconds(size_t device) const override;
    // launch_seconds plus the session fit's overhead at n.
    double execute_seconds(size_t device, int64_t n) const override;
    // Through the host: the source's read fit plus the destination's write
    // fit, where a side that shares the host's memory costs nothing (the
    // session imports host memory there instead of copying); 0 on one device.
    double transfer_seconds(size_t from, size_t to, uint64_t bytes) const override;
    // The profile's first_compile_seconds (see DeviceProfile for why it may
    // be the cold figure).
    double compile_seconds(size_t device) const override;
    // "profile <file> (measured <date>)", or the fallback's source.
    std::string source(size_t device) const override;

    const std::optional<DeviceProfile>& profile(size_t device) const { return profiles_.at(device); }

private:
    const CostModel& fallback(size_t device, const char* what) const;
    std::vector<DeviceRef> devices_;
    std::vector<std::optional<DeviceProfile>> profiles_;
    const CostModel* fallback_;
};

// The cost model a run plans with: each device's cached profile where one
// exists for this model (a corrupt or stale one is ignored with one warning),
// the a-priori model (prior_cost_model.hpp) corrected by each device's
// calibration (calibration.hpp) for the rest. The policy says whether
// devices without a stored calibration are probed now; the overload without
// it reads HETERO_CALIBRATE. Probes run and devices left uncalibrated are
// added to `notes` (may be null).
enum class CalibrationPolicy;
std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model, CalibrationPolicy policy,
                                           std::vector<std::string>* notes);
std::unique_ptr<CostModel> make_cost_model(const std::vector<DeviceRef>& devices, const ModelFile& model);

// For `hetero profile --show`: launch and transfer figures, one row of
// n:time points per family, the held-out error summary.
std::string describe_profile(const DeviceProfile& profile);

}  // namespace hetero
