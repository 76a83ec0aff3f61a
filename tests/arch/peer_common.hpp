// What the peer programs (peer_greedy.cpp, peer_embed.cpp) share: a failure
// reported as "PROGRAM: WHAT" with exit status 2, and llama.cpp's own log
// kept to its errors, on stderr.
#pragma once

#include <cstdio>

#include "ggml-backend.h"

namespace peer {

inline int fail(const char* program, const char* what) {
    std::fprintf(stderr, "%s: %s\n", program, what);
    return 2;
}

inline void quiet_log(ggml_log_level level, const char* text, void*) {
    if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

}  // namespace peer
