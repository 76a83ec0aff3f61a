// Thread count of a benchmark run: --threads=N (removed from argv before
// Google Benchmark parses it), else $HETERO_BENCH_THREADS, else 2.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace hetero::bench {

inline int take_threads_flag(int& argc, char** argv) {
    int threads = 0;
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
        else argv[out++] = argv[i];
    }
    argc = out;
    if (threads <= 0) {
        const char* env = std::getenv("HETERO_BENCH_THREADS");
        threads = env ? std::atoi(env) : 0;
    }
    return threads > 0 ? threads : 2;
}

}  // namespace hetero::bench
