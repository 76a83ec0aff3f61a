// Where the unit tests find their data: the real models, tokenizers and
// reference outputs kept in tests/data/models (README.md there says where
// each file comes from), and llama.cpp's vocabulary-only GGUFs, which are
// fetched (tests/fetch_vocab.sh) rather than kept.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace hetero::test {

// A scratch path in the temp directory that no other test process shares:
// ctest runs the suite in shards, side by side.
inline std::filesystem::path temp_path(const std::string& name) {
    return std::filesystem::temp_directory_path() / ("hetero_" + std::to_string(::getpid()) + "_" + name);
}

// A scratch file that a suite writes once and its tests share, removed when
// the test process ends (left behind, every run added megabytes to /tmp).
inline std::string removed_at_exit(const std::string& path) {
    static struct Files {
        std::vector<std::string> paths;
        ~Files() {
            std::error_code ec;
            for (const std::string& p : paths) std::filesystem::remove(p, ec);
        }
    } files;
    files.paths.push_back(path);
    return path;
}

// tests/data/models of the source tree.
inline std::string models_dir() { return std::string(HETERO_TEST_DATA_DIR) + "/models"; }

// llama.cpp's ggml-vocab-*.gguf files: $HETERO_VOCAB_DIR, else <source>/.peer/vocab.
inline std::string vocab_dir() {
    if (const char* dir = std::getenv("HETERO_VOCAB_DIR"); dir && *dir) return dir;
    return std::string(HETERO_SOURCE_DIR) + "/.peer/vocab";
}

// Whitespace-separated token ids of tests/data/models/reference/NAME. Sets
// `problem` (and returns what it read) when the file is missing, holds
// anything but ids, or holds other than `expected_count` of them.
inline std::vector<int32_t> read_reference_ids(const std::string& name, size_t expected_count, std::string& problem) {
    const std::string path = models_dir() + "/reference/" + name;
    std::ifstream in(path);
    std::vector<int32_t> ids;
    if (!in) {
        problem = "cannot read reference ids " + path;
        return ids;
    }
    for (int32_t id; in >> id;) ids.push_back(id);
    if (!in.eof()) {
        problem = path + ": not a list of token ids after " + std::to_string(ids.size()) + " of them";
    } else if (ids.size() != expected_count) {
        problem = path + " holds " + std::to_string(ids.size()) + " token ids, expected " + std::to_string(expected_count);
    } else {
        problem.clear();
    }
    return ids;
}

}  // namespace hetero::test
