// Fuzz inputs for readers that take a path: the bytes go to a private
// temporary file (in /dev/shm when there is one), rewritten every run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace hetero::fuzz {

inline const std::string& scratch_path() {
    static const std::string path = [] {
        const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
        return std::string(dir) + "/hetero-fuzz-" + std::to_string(getpid());
    }();
    return path;
}

inline const std::string& write_scratch(const uint8_t* data, size_t size) {
    const std::string& path = scratch_path();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path;
}

}  // namespace hetero::fuzz
