#include "restart_output.hpp"

#include <hetero/crash_report.hpp>
#include <hetero/sdk/hash.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace hetero::cli {

namespace {
char** g_argv = nullptr;
}

void set_program_arguments(char** argv) { g_argv = argv; }

void restart_on_plugin_crash() {
    if (g_argv) restart_after_plugin_crash(g_argv);
}

RestartedOutput::RestartedOutput() {
    const char* e = std::getenv("HETERO_RESTART_OUTPUT");
    if (!e) return;
    std::istringstream in(e);
    std::string hash;
    if (!(in >> printed_ >> hash) || printed_ == 0) return;
    hash_ = std::strtoull(hash.c_str(), nullptr, 16);
    holding_ = true;
}

void RestartedOutput::write(std::string_view piece, std::FILE* out) {
    note_output_written(piece.data(), piece.size());
    if (!holding_) {
        std::fwrite(piece.data(), 1, piece.size(), out);
        std::fflush(out);
        return;
    }
    held_.append(piece);
    if (held_.size() >= printed_) release(out);
}

void RestartedOutput::finish(std::FILE* out) {
    if (holding_) release(out);
}

void RestartedOutput::release(std::FILE* out) {
    holding_ = false;
    const size_t n = size_t(std::min<uint64_t>(printed_, held_.size()));
    if (held_.size() >= printed_ && sdk::fnv1a(std::string_view(held_).substr(0, n)) == hash_) {
        std::fwrite(held_.data() + n, 1, held_.size() - n, out);
    } else {
        fmt::print(stderr, "\nnote: the text after the restart differs from the {} bytes printed before the crash; here it is whole\n", printed_);
        std::fputc('\n', out);
        std::fwrite(held_.data(), 1, held_.size(), out);
    }
    held_.clear();
    std::fflush(out);
}

}  // namespace hetero::cli
