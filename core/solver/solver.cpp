// The partition solver (see solver.hpp for the objective).
//
// Method. For every set S of devices the plan may use (all 2^N subsets), the
// compile cost of S is paid once and the layer chain is solved by dynamic
// programming over (layer, home of the previous layer, bytes held on each
// memory-limited device); the best S wins (a plan using fewer devices than S
// is also found, at its own S). Inside one layer, given its home and a
// phase, each matmul's placement is independent of the others, so it is
// solved alone and memoised by (key, home, phase, S):
//   - rows are cut in units of the coarsest row_align in S (coarsened so
//     there are at most kMaxUnits units); rows beyond the last whole unit
//     stay with the home;
//   - per resource group, G_g(u) = the least summed time of u units spread
//     over the group's devices (a min-plus convolution, since devices of one
//     resource do not overlap);
//   - across groups, F(U) = min over u_1+..+u_k = U of max_g G_g(u_g)
//     (a min-max convolution, since different resources overlap).
// Shares are contiguous row ranges in ascending device order.
//
// Exactness: exact for this objective when no memory limit binds. When one
// does, a layer's home must hold its home_bytes and all its matmul weights
// that stay home; row shares that move weights to a memory-limited device
// other than the home are not allowed (so the DP over homes stays exact
// among plans whose splits leave memory-limited devices alone).
#include <hetero/error.hpp>
#include <hetero/solver/solver.hpp>

#include "memory_need.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace hetero {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxUnits = 64;

struct Split {
    double seconds = kInf;
    std::vector<Share> shares;
};

bool in_set(uint32_t set, size_t d) { return (set >> d) & 1u; }

double or_inf(double v) { return v < 0 ? kInf : v; }

// Best placement of one matmul given its layer's home, the phase and the device set.
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
    // Per device: seconds of u units (the home also takes the rest), asked
    // once per u rather than inside the convolutions.
    std::map<size_t, std::vector<double>> unit_cost;
    for (size_t d : devs) {
        std::vector<double>& c = unit_cost[d];
        c.resize(size_t(U + 1));
        for (int64_t u = 0; u <= U; ++u) {
            const int64_t rows = u * align + (d == home ? rest : 0);
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
    // Units per device -> contiguous rows in ascending device order; the home's rest last in its range.
    std::map<size_t, int64_t> units;
    const std::vector<int64_t> per_group = unwind(cross, U);
    for (size_t k = 0; k < gs.size(); ++k) {
        const std::vector<int64_t> take = unwind(gs[k].args, per_group[k]);
        for (size_t i = 0; i < gs[k].devs.size(); ++i) units[gs[k].devs[i]] = take[i];
    }
    std::vector<Share> shares;
    int64_t begin = 0;
    for (auto& [d, u] : units) {
        const int64_t rows = u * align + (d == home ? rest : 0);
        if (rows == 0) continue;
        shares.push_back(Share{d, begin, begin + rows});
        begin += rows;
    }
    const double t = split_seconds(pb, m, home, phase, shares);
    if (t < best.seconds) best = {t, shares};
    return best;
}

struct LayerChoice {
    double seconds = kInf;                    // weighted over phases
    std::array<double, kPhases> phase{};      // unweighted
    std::array<std::vector<std::vector<Share>>, kPhases> placement;
};

}  // namespace

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

SolverResult solve(const SolverProblem& pb) {
    const size_t N = pb.devices.size(), L = pb.layers.size();
    if (N == 0) throw Error("no device to plan for");
    if (N > 16) throw Error("the solver handles at most 16 devices");
    // Devices whose memory can bind: total demand above their memory.
    uint64_t demand = 0;
    for (const SolverLayer& l : pb.layers) {
        demand += l.home_bytes;
        for (const SolverMatmul& m : l.matmuls) demand += m.weight_bytes;
    }
    uint32_t limited = 0;
    for (size_t d = 0; d < N; ++d)
        if (pb.devices[d].memory_bytes && pb.devices[d].memory_bytes < demand) limited |= 1u << d;

    SolverResult best;
    best.objective = kInf;
    bool memory_bound = false;  // some placement was refused for memory alone
    std::map<std::tuple<std::string, size_t, int, uint32_t>, Split> memo;
    for (uint32_t set = 1; set < (1u << N); ++set) {
        double compile = 0;
        for (size_t d = 0; d < N; ++d)
            if (in_set(set, d)) compile += pb.devices[d].compile_seconds;
        if (compile >= best.objective) continue;
        // Per layer and home: the layer's best weighted seconds and placements.
        std::vector<std::vector<LayerChoice>> choice(L, std::vector<LayerChoice>(N));
        for (size_t l = 0; l < L; ++l) {
            const SolverLayer& ly = pb.layers[l];
            for (size_t h = 0; h < N; ++h) {
                if (!in_set(set, h)) continue;
                LayerChoice c;
                c.seconds = 0;
                for (int p = 0; p < kPhases && c.seconds < kInf; ++p) {
                    double t = ly.home[h][size_t(p)];
                    if (t < 0) {
                        c.seconds = kInf;
                        break;
                    }
                    for (const SolverMatmul& m : ly.matmuls) {
                        auto key = std::make_tuple(m.key, h, p, set);
                        auto it = memo.find(key);
                        if (it == memo.end() || !m.forced.empty()) it = memo.insert_or_assign(key, best_split(pb, m, h, p, set, limited)).first;
                        t += it->second.seconds;
                        c.placement[size_t(p)].push_back(it->second.shares);
                    }
                    c.phase[size_t(p)] = t;
                    c.seconds += pb.weight[size_t(p)] * t;
                }
                if (c.seconds < kInf)
                    for (int p = 0; p < kPhases; ++p)
                        for (const auto& shares : c.placement[size_t(p)])
                            for (const Share& s : shares)
                                if (!in_set(set, s.device)) c.seconds = kInf;
                choice[l][h] = std::move(c);
            }
        }
        // Memory a layer homed on h needs there: home bytes + matmul rows it keeps.
        auto bytes_on = [&](size_t l, size_t h, size_t d) {
            uint64_t b = d == h ? pb.layers[l].home_bytes : 0;
            for (int p = 0; p < kPhases; ++p) (void)p;
            const auto& pl = choice[l][h].placement;
            for (size_t j = 0; j < pb.layers[l].matmuls.size(); ++j) {
                const SolverMatmul& m = pb.layers[l].matmuls[j];
                // A device holds the rows it takes in either phase.
                int64_t rows = 0;
                for (int p = 0; p < kPhases; ++p)
                    for (const Share& s : pl[size_t(p)][j])
                        if (s.device == d) rows = std::max(rows, s.row_end - s.row_begin);
                b += m.rows ? m.weight_bytes * uint64_t(rows) / uint64_t(m.rows) : 0;
            }
            return b;
        };
        std::vector<size_t> lim;
        for (size_t d = 0; d < N; ++d)
            if (in_set(limited & set, d)) lim.push_back(d);
        // DP state: (home of the previous layer, bytes on each limited device) -> (seconds, back pointer).
        struct State {
            double seconds;
            std::array<double, kPhases> phase;
            long parent;
            size_t home;
            std::vector<uint64_t> bytes;
        };
        std::vector<std::vector<State>> states(L);
        for (size_t l = 0; l < L; ++l) {
            std::map<std::pair<size_t, std::vector<uint64_t>>, size_t> index;
            const size_t prev_count = l == 0 ? 1 : states[l - 1].size();
            for (size_t ps = 0; ps < prev_count; ++ps) {
                for (size_t h = 0; h < N; ++h) {
                    const LayerChoice& c = choice[l][h];
                    if (c.seconds == kInf) continue;
                    State s;
                    s.home = h;
                    s.parent = l == 0 ? -1 : long(ps);
                    s.bytes = l == 0 ? std::vector<uint64_t>(lim.size(), 0) : states[l - 1][ps].bytes;
                    s.seconds = (l == 0 ? 0.0 : states[l - 1][ps].seconds) + c.seconds;
                    s.phase = l == 0 ? std::array<double, kPhases>{} : states[l - 1][ps].phase;
                    for (int p = 0; p < kPhases; ++p) {
                        const double hand = l == 0 ? 0.0 : pb.handoff_seconds ? pb.handoff_seconds(states[l - 1][ps].home, h, p) : 0.0;
                        s.phase[size_t(p)] += c.phase[size_t(p)] + hand;
                        s.seconds += pb.weight[size_t(p)] * hand;
                    }
                    bool fits = true;
                    for (size_t i = 0; i < lim.size(); ++i) {
                        s.bytes[i] += bytes_on(l, h, lim[i]);
                        if (s.bytes[i] > pb.devices[lim[i]].memory_bytes) {
                            fits = false;
                            memory_bound = true;
                        }
                    }
                    if (!fits) continue;
                    auto key = std::make_pair(h, s.bytes);
                    auto it = index.find(key);
                    if (it == index.end()) {
                        index[key] = states[l].size();
                        states[l].push_back(std::move(s));
                    } else if (s.seconds < states[l][it->second].seconds) {
                        states[l][it->second] = std::move(s);
                    }
                }
            }
            if (states[l].empty()) break;
        }
        if (states[L - 1].empty()) continue;
        size_t bi = 0;
        for (size_t i = 1; i < states[L - 1].size(); ++i)
            if (states[L - 1][i].seconds < states[L - 1][bi].seconds) bi = i;
        const double total = compile + states[L - 1][bi].seconds;
        if (!(total < best.objective - 1e-12 * std::max(1.0, std::abs(total)))) continue;
        best.objective = total;
        best.compile_seconds = compile;
        best.phase_seconds = states[L - 1][bi].phase;
        best.layers.assign(L, {});
        long si = long(bi);
        for (size_t l = L; l-- > 0;) {
            const State& s = states[l][size_t(si)];
            best.layers[l].home = s.home;
            best.layers[l].placement = choice[l][s.home].placement;
            si = s.parent;
        }
    }
    if (best.objective == kInf) {
        if (memory_bound) throw Error("no placement fits in memory: " + solver_detail::memory_shortfall(pb));
        for (size_t l = 0; l < L; ++l) {
            bool any = false;
            for (size_t h = 0; h < N; ++h) any = any || (pb.layers[l].home[h][0] >= 0 && pb.layers[l].home[h][1] >= 0);
            if (!any) throw Error(fmt::format("no device can run layer {}", l));
        }
        throw Error("no feasible placement");
    }
    // Report the compile cost of the devices actually used.
    return evaluate(pb, best.layers);
}

SolverResult evaluate(const SolverProblem& pb, const std::vector<SolverLayerResult>& layers) {
    if (layers.size() != pb.layers.size()) throw Error("evaluate: one entry per layer is needed");
    SolverResult r;
    r.layers = layers;
    uint32_t used = 0;
    std::vector<uint64_t> bytes(pb.devices.size(), 0);
    for (size_t l = 0; l < layers.size(); ++l) {
        const SolverLayer& ly = pb.layers[l];
        const size_t h = layers[l].home;
        if (h >= pb.devices.size()) throw Error("evaluate: home out of range");
        used |= 1u << h;
        bytes[h] += ly.home_bytes;
        for (int p = 0; p < kPhases; ++p) {
            if (ly.home[h][size_t(p)] < 0) throw Error(fmt::format("evaluate: layer {} cannot run on {}", l, pb.devices[h].label));
            double t = ly.home[h][size_t(p)];
            if (l > 0 && pb.handoff_seconds) t += pb.handoff_seconds(layers[l - 1].home, h, p);
            if (layers[l].placement[size_t(p)].size() != ly.matmuls.size()) throw Error("evaluate: one placement per matmul is needed");
            for (size_t j = 0; j < ly.matmuls.size(); ++j) {
                const double s = split_seconds(pb, ly.matmuls[j], h, p, layers[l].placement[size_t(p)][j]);
                if (s == kInf) throw Error(fmt::format("evaluate: layer {} {} placed on a device that cannot run it", l, role_name(ly.matmuls[j].role)));
                t += s;
                for (const Share& sh : layers[l].placement[size_t(p)][j]) used |= 1u << sh.device;
            }
            r.phase_seconds[size_t(p)] += t;
        }
        for (size_t j = 0; j < ly.matmuls.size(); ++j) {
            const SolverMatmul& m = ly.matmuls[j];
            std::map<size_t, int64_t> rows;
            for (int p = 0; p < kPhases; ++p)
                for (const Share& sh : layers[l].placement[size_t(p)][j]) rows[sh.device] = std::max(rows[sh.device], sh.row_end - sh.row_begin);
            for (auto& [d, n] : rows) bytes[d] += m.rows ? m.weight_bytes * uint64_t(n) / uint64_t(m.rows) : 0;
        }
    }
    for (size_t d = 0; d < pb.devices.size(); ++d) {
        if (in_set(used, d)) r.compile_seconds += pb.devices[d].compile_seconds;
        if (pb.devices[d].memory_bytes && bytes[d] > pb.devices[d].memory_bytes)
            throw Error(fmt::format("evaluate: {} needs {} bytes, has {}", pb.devices[d].label, bytes[d], pb.devices[d].memory_bytes));
    }
    r.objective = r.compile_seconds;
    for (int p = 0; p < kPhases; ++p) r.objective += pb.weight[size_t(p)] * r.phase_seconds[size_t(p)];
    return r;
}

}  // namespace hetero
