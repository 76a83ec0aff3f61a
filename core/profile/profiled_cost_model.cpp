// The prediction side of a profile: piecewise-linear tables, the transfer
// fits, and the CostModel the solver asks.
#include <hetero/error.hpp>
#include <hetero/profile/profile.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace hetero {

double TransferFit::seconds(uint64_t bytes) const {
    return latency_seconds + (bytes_per_second > 0 ? double(bytes) / bytes_per_second : 0.0);
}

double HeldOutPoint::rel_error() const { return seconds > 0 ? std::abs(predicted - seconds) / seconds : 0.0; }

double ProfileTable::predict(double x) const {
    if (points.empty()) return -1;
    if (points.size() == 1) return points[0].seconds;
    // The segment containing x; the first or last one outside the grid.
    size_t i = 0;
    while (i + 2 < points.size() && x > double(points[i + 1].x)) ++i;
    const ProfilePoint &a = points[i], &b = points[i + 1];
    const double t = a.seconds + (b.seconds - a.seconds) * (x - double(a.x)) / double(b.x - a.x);
    return std::max(t, kMinNodeSeconds);
}

SessionFitPoint session_fit_at(const std::vector<SessionFitPoint>& fit, int64_t n) {
    if (fit.empty()) return {n, 1.0, 0.0};
    if (n <= fit.front().n) return fit.front();
    if (n >= fit.back().n) return fit.back();
    size_t i = 0;
    while (fit[i + 1].n < n) ++i;
    const SessionFitPoint &a = fit[i], &b = fit[i + 1];
    const double t = double(n - a.n) / double(b.n - a.n);
    return {n, a.scale + (b.scale - a.scale) * t, a.overhead_seconds + (b.overhead_seconds - a.overhead_seconds) * t};
}

HeldOutSummary held_out_summary(const DeviceProfile& p, double min_seconds) {
    std::vector<double> errs;
    HeldOutSummary s;
    auto add = [&](const std::string& family, const char* axis, const ProfileTable& t) {
        for (const auto& h : t.held_out) {
            if (h.seconds < min_seconds) continue;
            const double e = h.rel_error();
            errs.push_back(e);
            if (e >= s.max) {
                s.max = e;
                s.worst = fmt::format("{} {}={}", family, axis, h.x);
            }
        }
    };
    for (const auto& [family, f] : p.families) {
        add(family, "n", f.by_n);
        add(family, "kv", f.by_kv);
    }
    s.count = errs.size();
    if (!errs.empty()) {
        std::sort(errs.begin(), errs.end());
        const size_t m = errs.size() / 2;
        s.median = errs.size() % 2 ? errs[m] : 0.5 * (errs[m - 1] + errs[m]);
    }
    return s;
}

ProfiledCostModel::ProfiledCostModel(std::vector<DeviceRef> devices, std::vector<std::optional<DeviceProfile>> profiles,
                                     const CostModel* fallback)
    : devices_(std::move(devices)), profiles_(std::move(profiles)), fallback_(fallback) {
    if (profiles_.size() != devices_.size())
        throw Error(fmt::format("profiled cost model: {} profiles for {} devices", profiles_.size(), devices_.size()));
}

const CostModel& ProfiledCostModel::fallback(size_t device, const char* what) const {
    if (!fallback_)
        throw Error(fmt::format("no profile of {} for {} and no fallback cost model", devices_.at(device).label(), what));
    return *fallback_;
}

namespace {

// A row share of a matmul the profile measured whole (the solver's splits):
// the measured family of the same dtype and width with the fewest rows at
// least m (else the most rows), whose time the share takes in proportion.
// Returns the family's rows, or 0 when none is measured.
int64_t measured_rows_for(const DeviceProfile& p, const OpShape& shape) {
    OpShape probe = shape;
    probe.m = 0;
    std::string prefix = probe.family();
    prefix.pop_back();  // "matmul q4_0 k=2048 m="
    int64_t best = 0;
    for (auto it = p.families.lower_bound(prefix); it != p.families.end() && it->first.rfind(prefix, 0) == 0; ++it) {
        const int64_t m = std::atoll(it->first.c_str() + prefix.size());
        if (m <= 0 || it->second.by_n.empty()) continue;
        if (best == 0 || (m >= shape.m && (best < shape.m || m < best)) || (best < shape.m && m > best)) best = m;
    }
    return best;
}

}  // namespace

double ProfiledCostModel::node_seconds(size_t device, const OpShape& shape) const {
    if (const auto& p = profiles_.at(device)) {
        const std::string family = shape.family();
        if (shape.op == HETERO_OP_MATMUL && !p->families.count(family)) {
            if (const int64_t rows = measured_rows_for(*p, shape)) {
                OpShape whole = shape;
                whole.m = rows;
                return node_seconds(device, whole) * double(shape.m) / double(rows);
            }
        }
        if (auto it = p->families.find(family); it != p->families.end()) {
            const FamilyProfile& f = it->second;
            const double scale = (p->layer_scale.empty() ? 1.0 : p->layer_scale.predict(double(shape.n))) *
                                 session_fit_at(p->session_fit, shape.n).scale;
            if ((shape.op == HETERO_OP_ATTENTION || shape.op == HETERO_OP_ATTENTION_EXT) && shape.n == 1 && !f.by_kv.empty()) return scale * f.by_kv.predict(double(shape.kv));
            if (f.by_n.empty()) return fallback(device, "this op family").node_seconds(device, shape);
            double t = scale * f.by_n.predict(double(shape.n));
            if ((shape.op == HETERO_OP_ATTENTION || shape.op == HETERO_OP_ATTENTION_EXT) && shape.n > f.by_n.points.back().x) {
                // Beyond the grid (a context longer than the profile's), a chunk's
                // attention grows with n (n + 1) / 2 query-row pairs, not linearly.
                const double last = double(f.by_n.points.back().x), n = double(shape.n);
                t = scale * f.by_n.points.back().seconds * (n * (n + 1)) / (last * (last + 1));
            }
            // The n table's chunk sat at position 0, its queries attending to
            // (n + 1) / 2 rows on average; further into the context a chunk
            // attends to shape.kv rows on average, and its work grows with them.
            if ((shape.op == HETERO_OP_ATTENTION || shape.op == HETERO_OP_ATTENTION_EXT) && shape.n > 1) t *= std::max(1.0, double(shape.kv) / (0.5 * double(shape.n + 1)));
            return t;
        }
    }
    return fallback(device, "this op family").node_seconds(device, shape);
}

double ProfiledCostModel::launch_seconds(size_t device) const {
    if (const auto& p = profiles_.at(device)) return p->launch_seconds;
    return fallback(device, "launch costs").launch_seconds(device);
}

double ProfiledCostModel::execute_seconds(size_t device, int64_t n) const {
    if (const auto& p = profiles_.at(device))
        // Never below a tenth of the launch test: a fit's negative overhead is a correction, not a free execute.
        return std::max(0.1 * p->launch_seconds, p->launch_seconds + session_fit_at(p->session_fit, n).overhead_seconds);
    return fallback(device, "launch costs").execute_seconds(device, n);
}

double ProfiledCostModel::transfer_seconds(size_t from, size_t to, uint64_t bytes) const {
    if (from == to) return 0;
    const auto &pf = profiles_.at(from), &pt = profiles_.at(to);
    if (!pf || !pt) return fallback(pf ? to : from, "transfers").transfer_seconds(from, to, bytes);
    auto shares_host = [&](size_t d) { return (devices_[d].props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) != 0; };
    return (shares_host(from) ? 0.0 : pf->read.seconds(bytes)) + (shares_host(to) ? 0.0 : pt->write.seconds(bytes));
}

double ProfiledCostModel::compile_seconds(size_t device) const {
    if (const auto& p = profiles_.at(device)) return p->first_compile_seconds;
    return fallback(device, "compile costs").compile_seconds(device);
}

std::string ProfiledCostModel::source(size_t device) const {
    if (const auto& p = profiles_.at(device)) return fmt::format("profile {} (measured {})", p->file, p->date);
    if (!fallback_) return "none";
    return fallback_->source(device);
}

}  // namespace hetero
