// Placing one matmul of a layer, the inner problem of the partition solver
// (solve() in solver.cpp memoises it by key, home, phase and device set):
//   - rows are cut in units of the coarsest row_align in the set (coarsened
//     so there are at most kMaxUnits units); rows beyond the last whole unit
//     stay with the home (or the last device that can run the matmul, where
//     the home cannot);
//   - per resource group, G_g(u) = the least summed time of u units spread
//     over the group's devices (a min-plus convolution, since devices of one
//     resource do not overlap);
//   - across groups, F(U) = min over u_1+..+u_k = U of max_g G_g(u_g)
//     (a min-max convolution, since different resources overlap).
// Shares are contiguous row ranges in ascending device order.
#include "matmul_split.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace hetero {

namespace solver_detail {

namespace {

constexpr int64_t kMaxUnits = 64;

double or_inf(double v) { return v < 0 ? kInf : v; }

}  // namespace

Split best_split(const SolverProblem& pb, const SolverMatmul& m, size_t home, int phase, uint32_t set, uint32_t limited) {
    Split best;
    if (!m.forced.empty()) {
        best.shares = m.forced;
        best.seconds = split_seconds(pb, m, home, phase, m.forced);
        return best;
    }
    const size_t N = pb.devices.size();
    // Whole on one device: the home, or another when moves are allowed.
    for (size_t d = 0; d < N; ++d) {
        if (!in_set(set, d) || (d != home && (!pb.allow_moves || in_set(limited, d)))) continue;
        const std::vector<Share> s = {Share{d, 0, m.rows}};
        const double t = split_seconds(pb, m, home, phase, s);
        if (t < best.seconds) best = {t, s};
    }
    if (!pb.allow_splits || !pb.allow_moves) return best;
    std::vector<size_t> devs;
    int64_t align = 1;
    for (size_t d = 0; d < N; ++d)
        if (in_set(set, d) && (d == home || !in_set(limited, d)) && m.seconds(d, phase, std::min<int64_t>(m.rows, pb.devices[d].row_align)) >= 0) {
            devs.push_back(d);
            align = std::lcm(align, std::max<int64_t>(1, pb.devices[d].row_align));
        }
    if (devs.size() < 2 || m.rows < 2 * align) return best;
    while (m.rows / align > kMaxUnits) align *= 2;
    const int64_t U = m.rows / align, rest = m.rows - U * align;
    // The rows beyond the last whole unit go to the home, or, where the home
    // cannot run this matmul, to the last device that can (else they would
    // belong to no share).
    const size_t rest_owner = std::find(devs.begin(), devs.end(), home) != devs.end() ? home : devs.back();
    // Per device: seconds of u units (the rest's owner also takes the rest),
    // asked once per u rather than inside the convolutions.
    std::map<size_t, std::vector<double>> unit_cost;
    for (size_t d : devs) {
        std::vector<double>& c = unit_cost[d];
        c.resize(size_t(U + 1));
        for (int64_t u = 0; u <= U; ++u) {
            const int64_t rows = u * align + (d == rest_owner ? rest : 0);
            double t = rows == 0 ? 0.0 : or_inf(m.seconds(d, phase, rows));
            if (rows != 0 && d != home) t += m.copy_seconds(home, d, phase, rows);
            c[size_t(u)] = t;
        }
    }
    // Groups by resource.
    std::map<int, std::vector<size_t>> groups;
    for (size_t d : devs) groups[pb.devices[d].resource].push_back(d);
    // A min-plus (within a resource) or min-max (across resources)
    // convolution of acc with cost; arg[u] receives the units given to cost.
    auto convolve = [U](const std::vector<double>& acc, const std::vector<double>& cost, bool add, std::vector<int64_t>& arg) {
        std::vector<double> next(size_t(U + 1), kInf);
        arg.assign(size_t(U + 1), 0);
        for (int64_t u = 0; u <= U; ++u)
            for (int64_t v = 0; v <= u; ++v) {
                const double a = acc[size_t(u - v)], c = cost[size_t(v)];
                const double t = add ? a + c : std::max(a, c);
                if (t < next[size_t(u)]) next[size_t(u)] = t, arg[size_t(u)] = v;
            }
        return next;
    };
    // Walks the argument tables back from `total` units: units of each stage.
    auto unwind = [](const std::vector<std::vector<int64_t>>& args, int64_t total) {
        std::vector<int64_t> take(args.size() + 1, 0);
        for (size_t i = args.size(); i > 0; --i) take[i] = args[i - 1][size_t(total)], total -= take[i];
        take[0] = total;
        return take;
    };
    // Per group: G(u), and the tables to recover each device's units.
    struct Group {
        std::vector<size_t> devs;
        std::vector<double> g;
        std::vector<std::vector<int64_t>> args;
    };
    std::vector<Group> gs;
    for (auto& [res, list] : groups) {
        Group G;
        G.devs = list;
        G.g = unit_cost[list[0]];
        G.args.resize(list.size() - 1);
        for (size_t i = 1; i < list.size(); ++i) G.g = convolve(G.g, unit_cost[list[i]], true, G.args[i - 1]);
        gs.push_back(std::move(G));
    }
    // Across groups: F_k(u) = min_v max(F_{k-1}(u-v), G_k(v)).
    std::vector<double> F = gs[0].g;
    std::vector<std::vector<int64_t>> cross(gs.size() - 1);
    for (size_t k = 1; k < gs.size(); ++k) F = convolve(F, gs[k].g, false, cross[k - 1]);
    if (!(F[size_t(U)] < best.seconds)) return best;
    // Units per device -> contiguous rows in ascending device order; the rest last in its owner's range.
    std::map<size_t, int64_t> units;
    const std::vector<int64_t> per_group = unwind(cross, U);
    for (size_t k = 0; k < gs.size(); ++k) {
        const std::vector<int64_t> take = unwind(gs[k].args, per_group[k]);
        for (size_t i = 0; i < gs[k].devs.size(); ++i) units[gs[k].devs[i]] = take[i];
    }
    std::vector<Share> shares;
    int64_t begin = 0;
    for (auto& [d, u] : units) {
        const int64_t rows = u * align + (d == rest_owner ? rest : 0);
        if (rows == 0) continue;
        shares.push_back(Share{d, begin, begin + rows});
        begin += rows;
    }
    const double t = split_seconds(pb, m, home, phase, shares);
    if (t < best.seconds) best = {t, shares};
    return best;
}

}  // namespace solver_detail

using solver_detail::kInf;

double split_seconds(const SolverProblem& pb, const SolverMatmul& m, size_t home, int phase, const std::vector<Share>& shares) {
    std::map<int, double> per_resource;
    int64_t covered = 0;
    for (const Share& s : shares) {
        if (s.device >= pb.devices.size() || s.row_end <= s.row_begin || s.row_begin != covered)
            throw Error(fmt::format("shares of {} must cover rows 0-{} in order without gaps", role_name(m.role), m.rows - 1));
        covered = s.row_end;
        double t = m.seconds(s.device, phase, s.row_end - s.row_begin);
        if (t < 0) return kInf;
        if (s.device != home) t += m.copy_seconds(home, s.device, phase, s.row_end - s.row_begin);
        per_resource[pb.devices[s.device].resource] += t;
    }
    if (covered != m.rows) throw Error(fmt::format("shares of {} must cover rows 0-{}", role_name(m.role), m.rows - 1));
    double worst = 0;
    for (auto& [r, t] : per_resource) worst = std::max(worst, t);
    const bool away = std::any_of(shares.begin(), shares.end(), [&](const Share& s) { return s.device != home; });
    if (away && m.away_seconds) worst += m.away_seconds(home, phase);
    return worst;
}

}  // namespace hetero
