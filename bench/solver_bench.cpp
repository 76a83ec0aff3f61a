// The partition solver on a 32-layer, 4-device problem with row splits: the
// size of a 7B llama (7 matmuls per layer, Llama-2-7B widths) planned across
// a CPU, a second CPU-kind device on the same silicon (PoCL-like), a discrete
// GPU with a memory limit and an NPU-like device with 256-row alignment and a
// compile cost. Costs are rooflines: the solver's speed, not the costs'
// realism, is what is measured.
//
//   identical layers: every layer costs the same (the solver memoises splits)
//   distinct layers:  each layer's costs differ slightly (no memo hits across layers)
#include <hetero/solver/solver.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

namespace {

using hetero::Role;
using hetero::SolverProblem;

struct DeviceModel {
    double gflops, gbs, launch;
};

SolverProblem llama7b_problem(bool distinct_layers) {
    // cpu, cpu-kind opencl (same resource as cpu), gpu (24 GB), npu (static shapes).
    const DeviceModel dev[4] = {{800, 60, 5e-6}, {200, 40, 30e-6}, {6000, 300, 20e-6}, {20000, 50, 100e-6}};
    SolverProblem pb;
    pb.devices = {{"cpu:0", 0, 0, 0.0, 32}, {"opencl:0", 0, 0, 1.0, 32}, {"gpu:0", 1, 24ull << 30, 0.5, 32}, {"npu:0", 2, 4ull << 30, 2.0, 256}};
    const int n_layer = 32;
    const int64_t d = 4096, ff = 11008;
    const struct {
        Role role;
        int64_t rows, k;
    } mats[7] = {{Role::q, d, d}, {Role::k, d, d}, {Role::v, d, d}, {Role::attn_out, d, d},
                 {Role::gate, ff, d}, {Role::up, ff, d}, {Role::down, d, ff}};
    const int64_t tokens[hetero::kPhases] = {512, 1};
    for (int l = 0; l <= n_layer; ++l) {
        const double jitter = distinct_layers ? 1.0 + 0.001 * l : 1.0;
        hetero::SolverLayer layer;
        for (int dv = 0; dv < 4; ++dv)
            layer.home.push_back({dev[dv].launch * 8 + 2e-4 / dev[dv].gbs * 60 * jitter, dev[dv].launch * 8 + 1e-5 * jitter});
        layer.home_bytes = 2ull * 4096 * 4096 * 2;  // a 4096-token f16 KV cache
        const int n_mats = l == n_layer ? 1 : 7;
        for (int j = 0; j < n_mats; ++j) {
            hetero::SolverMatmul m;
            const int64_t k = l == n_layer ? d : mats[j].k;
            m.role = l == n_layer ? Role::output : mats[j].role;
            m.rows = l == n_layer ? 32000 : mats[j].rows;
            m.key = distinct_layers ? std::string(hetero::role_name(m.role)) + std::to_string(l) : hetero::role_name(m.role);
            m.weight_bytes = uint64_t(m.rows * k) * 18 / 32;  // Q4_0
            m.seconds = [dev, k, tokens, jitter](size_t dv, int p, int64_t rows) {
                const double flops = 2.0 * double(tokens[p]) * double(k) * double(rows);
                const double bytes = double(rows * k) * 18 / 32 + double(tokens[p] * (k + rows)) * 4;
                return jitter * std::max(flops / (dev[dv].gflops * 1e9), bytes / (dev[dv].gbs * 1e9));
            };
            m.copy_seconds = [tokens, k](size_t, size_t, int p, int64_t rows) {
                return 20e-6 + double(tokens[p] * (k + rows)) * 4 / 12e9;
            };
            layer.matmuls.push_back(std::move(m));
        }
        pb.layers.push_back(std::move(layer));
    }
    pb.handoff_seconds = [](size_t a, size_t b, int p) { return a == b ? 0.0 : 20e-6 + (p == 0 ? 512.0 : 1.0) * 4096 * 4 / 12e9; };
    pb.weight = {1.0, 128.0};
    return pb;
}

void BM_Solve32Layers4Devices(benchmark::State& state) {
    const SolverProblem pb = llama7b_problem(state.range(0) != 0);
    for (auto _ : state) {
        hetero::SolverResult r = hetero::solve(pb);
        benchmark::DoNotOptimize(r);
    }
    const hetero::SolverResult r = hetero::solve(pb);
    size_t split = 0;
    for (const hetero::SolverLayerResult& l : r.layers)
        for (const auto& phase : l.placement)
            for (const auto& shares : phase) split += shares.size() > 1;
    const double objective = r.objective;
    state.SetLabel(std::string(state.range(0) ? "distinct layers" : "identical layers") + ", objective " + std::to_string(objective) + " s, " + std::to_string(split) + " split matmuls");
}
BENCHMARK(BM_Solve32Layers4Devices)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
