// The partition solver (see solver.hpp for the objective).
//
// Method. For every set S of devices the plan may use (all 2^N subsets), the
// compile cost of S is paid once and the layer chain is solved by dynamic
// programming over (layer, home of the previous layer, bytes held on each
// memory-limited device); the best S wins (a plan using fewer devices than S
// is also found, at its own S). Inside one layer, given its home and a
// phase, each matmul's placement is independent of the others, so it is
// solved alone (best_split, matmul_split.cpp: row cuts per resource group
// by min-plus, across groups by min-max convolutions) and memoised by
// (key, home, phase, S).
//
// Exactness: exact for this objective when no memory limit binds. When one
// does, a layer's home must hold its home_bytes and all its matmul weights
// that stay home; row shares that move weights to a memory-limited device
// other than the home are not allowed (so the DP over homes stays exact
// among plans whose splits leave memory-limited devices alone).
#include <hetero/error.hpp>
#include <hetero/solver/solver.hpp>

#include "matmul_split.hpp"
#include "memory_need.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace hetero {

using solver_detail::in_set;
using solver_detail::kInf;

namespace {

// Devices whose memory can bind: the whole chain's demand is above their memory.
uint32_t memory_limited(const SolverProblem& pb) {
    uint64_t demand = 0;
    for (const SolverLayer& l : pb.layers) {
        demand += l.home_bytes;
        for (const SolverMatmul& m : l.matmuls) demand += m.weight_bytes;
    }
    uint32_t limited = 0;
    for (size_t d = 0; d < pb.devices.size(); ++d)
        if (pb.devices[d].memory_bytes && pb.devices[d].memory_bytes < demand) limited |= 1u << d;
    return limited;
}

double compile_seconds_of(const SolverProblem& pb, uint32_t set) {
    double compile = 0;
    for (size_t d = 0; d < pb.devices.size(); ++d)
        if (in_set(set, d)) compile += pb.devices[d].compile_seconds;
    return compile;
}

std::vector<size_t> devices_in(uint32_t set, size_t n_devices) {
    std::vector<size_t> out;
    for (size_t d = 0; d < n_devices; ++d)
        if (in_set(set, d)) out.push_back(d);
    return out;
}

// One layer homed on one device: what it costs and where its matmuls run.
struct LayerChoice {
    double seconds = kInf;                    // weighted over phases
    std::array<double, kPhases> phase{};      // unweighted
    std::array<std::vector<std::vector<Share>>, kPhases> placement;
};

using ChoiceTable = std::vector<std::vector<LayerChoice>>;  // [layer][home]
// Best splits by (matmul key, home, phase, device set); shared by all sets.
using SplitMemo = std::map<std::tuple<std::string, size_t, int, uint32_t>, solver_detail::Split>;

// Layer l homed on h, within `set`: each matmul placed on its own, memoised.
// Forced ones are priced every time: their key names the layer, not the
// placement, so two forced matmuls of one shape in a layer share it. A
// choice that puts a share outside `set` is ruled out.
LayerChoice layer_choice(const SolverProblem& pb, size_t l, size_t h, uint32_t set, uint32_t limited, SplitMemo& memo) {
    const SolverLayer& ly = pb.layers[l];
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
            if (it == memo.end() || !m.forced.empty()) it = memo.insert_or_assign(key, solver_detail::best_split(pb, m, h, p, set, limited)).first;
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
    return c;
}

// Per layer and home in `set`: the layer's best weighted seconds and
// placements (homes outside `set` stay infeasible).
ChoiceTable layer_choices(const SolverProblem& pb, uint32_t set, uint32_t limited, SplitMemo& memo) {
    const size_t N = pb.devices.size(), L = pb.layers.size();
    ChoiceTable choice(L, std::vector<LayerChoice>(N));
    for (size_t l = 0; l < L; ++l)
        for (size_t h = 0; h < N; ++h)
            if (in_set(set, h)) choice[l][h] = layer_choice(pb, l, h, set, limited, memo);
    return choice;
}

// Memory layer l, homed on h with choice c, needs on device d: its home
// bytes where d is the home, plus the weight rows d takes (the larger share
// of either phase, since a device keeps the rows it takes in either).
uint64_t bytes_on(const SolverProblem& pb, const LayerChoice& c, size_t l, size_t h, size_t d) {
    uint64_t b = d == h ? pb.layers[l].home_bytes : 0;
    for (size_t j = 0; j < pb.layers[l].matmuls.size(); ++j) {
        const SolverMatmul& m = pb.layers[l].matmuls[j];
        int64_t rows = 0;
        for (int p = 0; p < kPhases; ++p)
            for (const Share& s : c.placement[size_t(p)][j])
                if (s.device == d) rows = std::max(rows, s.row_end - s.row_begin);
        b += m.rows ? m.weight_bytes * uint64_t(rows) / uint64_t(m.rows) : 0;
    }
    return b;
}

// A DP state after some layer: that layer's home, the bytes so far on each
// memory-limited device of the set, the seconds so far and a back pointer
// (index into the previous layer's states; -1 for the first layer).
struct State {
    double seconds;
    std::array<double, kPhases> phase;
    long parent;
    size_t home;
    std::vector<uint64_t> bytes;
};

using StateChain = std::vector<std::vector<State>>;  // [layer] -> states

// `s` = state `prev` (index ps; null before the first layer) extended by
// homing layer l on h with choice c, the hand-over from the previous home
// included. False when it overflows a limited device (`lim`); then
// memory_bound is set, so the final error can name memory.
bool extend(const SolverProblem& pb, const LayerChoice& c, const std::vector<size_t>& lim, size_t l, const State* prev, size_t ps, size_t h,
            State& s, bool& memory_bound) {
    s.home = h;
    s.parent = prev ? long(ps) : -1;
    s.bytes = prev ? prev->bytes : std::vector<uint64_t>(lim.size(), 0);
    s.seconds = (prev ? prev->seconds : 0.0) + c.seconds;
    s.phase = prev ? prev->phase : std::array<double, kPhases>{};
    for (int p = 0; p < kPhases; ++p) {
        const double hand = !prev ? 0.0 : pb.handoff_seconds ? pb.handoff_seconds(prev->home, h, p) : 0.0;
        s.phase[size_t(p)] += c.phase[size_t(p)] + hand;
        s.seconds += pb.weight[size_t(p)] * hand;
    }
    bool fits = true;
    for (size_t i = 0; i < lim.size(); ++i) {
        s.bytes[i] += bytes_on(pb, c, l, h, lim[i]);
        if (s.bytes[i] > pb.devices[lim[i]].memory_bytes) {
            fits = false;
            memory_bound = true;
        }
    }
    return fits;
}

// The DP over the layer chain for one device set: each layer's states extend
// the previous layer's by every feasible home; of states with equal (home,
// bytes on each limited device) the cheaper is kept, since what follows
// depends on nothing else. Stops at the first layer left with no state.
StateChain chain_states(const SolverProblem& pb, const ChoiceTable& choice, const std::vector<size_t>& lim, bool& memory_bound) {
    const size_t N = pb.devices.size(), L = pb.layers.size();
    StateChain states(L);
    for (size_t l = 0; l < L; ++l) {
        std::map<std::pair<size_t, std::vector<uint64_t>>, size_t> index;
        const size_t prev_count = l == 0 ? 1 : states[l - 1].size();
        for (size_t ps = 0; ps < prev_count; ++ps) {
            const State* prev = l == 0 ? nullptr : &states[l - 1][ps];
            for (size_t h = 0; h < N; ++h) {
                const LayerChoice& c = choice[l][h];
                if (c.seconds == kInf) continue;
                State s;
                if (!extend(pb, c, lim, l, prev, ps, h, s, memory_bound)) continue;
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
    return states;
}

// The cheapest of the last layer's states (the first of equals).
size_t cheapest(const std::vector<State>& last) {
    size_t bi = 0;
    for (size_t i = 1; i < last.size(); ++i)
        if (last[i].seconds < last[bi].seconds) bi = i;
    return bi;
}

// The chain ending in the last layer's state `last`, walked back to the first layer.
std::vector<SolverLayerResult> backtrack(const StateChain& states, const ChoiceTable& choice, size_t last) {
    const size_t L = states.size();
    std::vector<SolverLayerResult> layers(L);
    long si = long(last);
    for (size_t l = L; l-- > 0;) {
        const State& s = states[l][size_t(si)];
        layers[l].home = s.home;
        layers[l].placement = choice[l][s.home].placement;
        si = s.parent;
    }
    return layers;
}

// Why no device set gave a plan: memory when some placement was refused for
// memory alone; else the first layer no device can run in both phases.
[[noreturn]] void throw_infeasible(const SolverProblem& pb, bool memory_bound) {
    if (memory_bound) throw Error("no placement fits in memory: " + solver_detail::memory_shortfall(pb));
    for (size_t l = 0; l < pb.layers.size(); ++l) {
        bool any = false;
        for (size_t h = 0; h < pb.devices.size(); ++h) any = any || (pb.layers[l].home[h][0] >= 0 && pb.layers[l].home[h][1] >= 0);
        if (!any) throw Error(fmt::format("no device can run layer {}", l));
    }
    throw Error("no feasible placement");
}

}  // namespace

SolverResult solve(const SolverProblem& pb) {
    const size_t N = pb.devices.size(), L = pb.layers.size();
    if (N == 0) throw Error("no device to plan for");
    if (N > 16) throw Error("the solver handles at most 16 devices");
    const uint32_t limited = memory_limited(pb);
    SolverResult best;
    best.objective = kInf;
    bool memory_bound = false;  // some placement was refused for memory alone
    SplitMemo memo;
    for (uint32_t set = 1; set < (1u << N); ++set) {
        const double compile = compile_seconds_of(pb, set);
        if (compile >= best.objective) continue;  // the set's compiles alone already lose
        const ChoiceTable choice = layer_choices(pb, set, limited, memo);
        const StateChain states = chain_states(pb, choice, devices_in(limited & set, N), memory_bound);
        if (states[L - 1].empty()) continue;
        const size_t bi = cheapest(states[L - 1]);
        const double total = compile + states[L - 1][bi].seconds;
        // Only a clear gain replaces the best: on a tie within rounding the earlier set stays.
        if (!(total < best.objective - 1e-12 * std::max(1.0, std::abs(total)))) continue;
        best.objective = total;
        best.compile_seconds = compile;
        best.phase_seconds = states[L - 1][bi].phase;
        best.layers = backtrack(states, choice, bi);
    }
    if (best.objective == kInf) throw_infeasible(pb, memory_bound);
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
