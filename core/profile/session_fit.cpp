// Session fit: one-node and one-layer graphs leave out what a session adds
// around them (the binding tables of an execute, waking the provider's
// threads, many layers' nodes in one executable). Here the model runs as a
// single-device plan runs it, with a trace, and each executable's measured
// time is set against what the tables predict for its nodes; a line through
// the layers executable and the head executable gives, per chunk size, the
// overhead per execute and the scale of the nodes (SessionFitPoint).
#include "session_fit.hpp"

#include <hetero/error.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/trace.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>

namespace hetero {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Decode: the prompt before the timed steps, and the steps' bounds.
constexpr int32_t kDecodePrompt = 16;
constexpr int kMinDecodeSteps = 16, kMaxDecodeSteps = 128;

// Executable name -> (measured seconds, predicted seconds of its nodes).
using Samples = std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>;

void collect(const TraceRecorder& trace, size_t from, double execute_seconds, Samples& out) {
    for (const auto& s : trace.slices(from)) {
        if (s.category != "execute" || s.predicted_seconds < 0 || s.simulated) continue;
        auto& [measured, nodes] = out[s.name];
        measured.push_back(s.seconds);
        nodes.push_back(std::max(0.0, s.predicted_seconds - execute_seconds));
    }
}

// measured - launch = overhead + scale * nodes, through the executables'
// medians: least squares where at least two executables differ enough in
// size to tell the overhead from the scale, else a pure scale.
SessionFitPoint fit_point(int64_t n, const Samples& samples, double launch) {
    std::vector<std::pair<double, double>> xy;  // (nodes, measured - launch)
    for (const auto& [name, s] : samples) xy.emplace_back(median(s.second), median(s.first) - launch);
    double sx = 0, sy = 0;
    for (auto [x, y] : xy) sx += x, sy += y;
    SessionFitPoint f{n, 1.0, 0.0};
    if (xy.empty() || !(sx > 0)) return f;
    double lo = xy.front().first, hi = lo;
    for (auto [x, y] : xy) lo = std::min(lo, x), hi = std::max(hi, x);
    if (xy.size() >= 2 && hi > 1.5 * lo) {
        const double k = double(xy.size()), mx = sx / k, my = sy / k;
        double sxx = 0, sxy = 0;
        for (auto [x, y] : xy) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
        f.scale = sxy / sxx;
        f.overhead_seconds = my - f.scale * mx;
    }
    // An execute never costs less than a tenth of the launch test; a fit
    // outside that (or a non-positive scale) falls back to a pure scale.
    if (!(f.scale > 0) || !std::isfinite(f.overhead_seconds) || f.overhead_seconds < -0.9 * launch) {
        f.overhead_seconds = 0;
        f.scale = std::max(sy, 0.0) / sx;
    }
    if (!(f.scale > 0)) f.scale = 1.0;
    return f;
}

}  // namespace

std::vector<int64_t> session_fit_points(int64_t cap) {
    std::vector<int64_t> out{1};
    for (int64_t n : {16, 64, 256, 512, 1024, 2048, 4096})
        if (n <= cap) out.push_back(n);
    return out;
}

std::vector<SessionFitPoint> measure_session_fit(const DeviceRef& device, const ModelFile& model, const CostModel& cost,
                                                double launch_seconds, const SessionFitOptions& fo, const std::function<void(int64_t n)>& progress) {
    std::vector<SessionFitPoint> out;
    const std::vector<DeviceRef> devices{device};
    TraceRecorder trace;
    SessionOptions so;
    so.n_ctx = fo.n_ctx;
    so.max_batch = std::max(1, fo.max_tokens);  // chunks as large as the points, as a long prompt's are
    so.cost = &cost;
    so.trace = &trace;
    Session session(model, plan_single_device(model.hparams.n_layer, devices, 0), so);
    const int32_t n_ctx = session.n_ctx();
    const int32_t cap = std::min<int32_t>({fo.max_tokens, so.max_batch, n_ctx});
    std::mt19937 rng(20261125);
    std::uniform_int_distribution<int32_t> token(0, model.hparams.n_vocab - 1);
    auto tokens = [&](int64_t n) {
        std::vector<int32_t> t(static_cast<size_t>(n));
        for (auto& x : t) x = token(rng);
        return t;
    };
    for (int64_t n : fo.points.empty() ? session_fit_points(cap) : fo.points) {
        if (n > cap) break;
        if (progress) progress(n);
        const double execute = cost.execute_seconds(0, n);
        Samples samples;
        if (n == 1) {
            const int32_t prompt = std::min(kDecodePrompt, n_ctx / 2);
            session.forward(tokens(prompt), 0);
            session.forward(tokens(1), prompt);  // warm-up step
            const int32_t last = std::min(prompt + 1 + kMaxDecodeSteps, n_ctx);
            const auto t0 = Clock::now();
            for (int32_t pos = prompt + 1, steps = 0; pos < last; ++pos, ++steps) {
                if (steps >= kMinDecodeSteps && since(t0) > fo.target_seconds) break;
                const size_t mark = trace.size();
                session.forward(tokens(1), pos);
                collect(trace, mark, execute, samples);
            }
        } else {
            const size_t warm = trace.size();
            session.forward(tokens(n), 0);  // warm-up (builds the chunk size's executables)
            double predicted = 0;
            for (const auto& s : trace.slices(warm))
                if (s.category == "execute") predicted += std::max(0.0, s.predicted_seconds);
            if (predicted > fo.max_forward_seconds) break;
            const auto t0 = Clock::now();
            for (int run = 0; run < fo.max_runs; ++run) {
                if (run >= fo.min_runs && since(t0) > fo.target_seconds) break;
                const size_t mark = trace.size();
                session.forward(tokens(n), 0);
                collect(trace, mark, execute, samples);
            }
        }
        if (samples.empty()) throw Error(fmt::format("{}: the session recorded no executables at n={}", device.label(), n));
        out.push_back(fit_point(n, samples, launch_seconds));
    }
    return out;
}

void fit_session(const DeviceRef& device, const ModelFile& model, DeviceProfile& profile, const ProfileOptions& options,
                 const std::function<void(int64_t n)>& progress, int64_t kept_up_to) {
    std::vector<SessionFitPoint> kept;
    for (const SessionFitPoint& f : profile.session_fit)
        if (f.n <= kept_up_to) kept.push_back(f);
    profile.session_fit.clear();  // the cost model below predicts from the tables alone
    SessionFitOptions fo;
    for (int64_t n : session_fit_points(profile.max_tokens))
        if (n > kept_up_to) fo.points.push_back(n);
    if (fo.points.empty()) {
        profile.session_fit = std::move(kept);
        return;
    }
    const std::vector<DeviceRef> devices{device};
    PriorCostModel prior(devices);
    ProfiledCostModel cost(devices, {profile}, &prior);
    fo.n_ctx = profile.n_ctx;
    fo.max_tokens = profile.max_tokens;
    fo.target_seconds = options.target_seconds;
    fo.min_runs = options.min_runs;
    fo.max_runs = options.max_runs;
    for (const SessionFitPoint& f : measure_session_fit(device, model, cost, profile.launch_seconds, fo, progress)) kept.push_back(f);
    profile.session_fit = std::move(kept);
}

}  // namespace hetero
