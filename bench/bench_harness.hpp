// What the cpu provider's Google Benchmark programs share: their
// --NAME=VALUE flags (taken out of argv before Google Benchmark parses it),
// the rig of the current case kept between the calls of one case, and the
// run itself.
#pragma once

#include <benchmark/benchmark.h>

#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace hetero::bench {

// Each --NAME=VALUE of `flags` found in argv sets its string and leaves argv.
inline void take_string_flags(int& argc, char** argv, std::initializer_list<std::pair<const char*, std::string*>> flags) {
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        bool taken = false;
        for (const auto& [prefix, value] : flags) {
            const size_t n = std::strlen(prefix);
            if (taken || std::strncmp(argv[i], prefix, n) != 0) continue;
            *value = argv[i] + n;
            taken = true;
        }
        if (!taken) argv[out++] = argv[i];
    }
    argc = out;
}

// The rig of case `c`: the one kept when it is c's, else a new one (the old
// one goes first: two rigs need not fit in memory together).
template <class Rig, class Case>
Rig& rig_for(std::unique_ptr<Rig>& kept, const Case& c) {
    if (!kept || !(kept->which() == c)) {
        kept.reset();
        kept = std::make_unique<Rig>(c);
    }
    return *kept;
}

// rig_for, run once (the first touch of the scratch and the pool); nullptr,
// with the case skipped and the error shown, when that fails.
template <class Rig, class Case>
Rig* warm_rig(benchmark::State& state, std::unique_ptr<Rig>& kept, const Case& c) {
    try {
        Rig& rig = rig_for(kept, c);
        rig.run();
        return &rig;
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return nullptr;
    }
}

// Runs the benchmarks registered; the kept rig goes before the provider
// (another static) does.
template <class Rig>
int run_benchmarks(int argc, char** argv, std::unique_ptr<Rig>& kept) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    kept.reset();
    benchmark::Shutdown();
    return 0;
}

}  // namespace hetero::bench
