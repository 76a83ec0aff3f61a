#include "line_reader.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#ifdef HETERO_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace hetero::cli {

namespace {

constexpr int kHistoryEntries = 1000;
constexpr const char* kPrompt = "> ";
constexpr const char* kContinuationPrompt = ". ";
constexpr const char* kBlockFence = "\"\"\"";

}  // namespace

bool LineReader::has_line_editing() {
#ifdef HETERO_HAVE_LIBEDIT
    return true;
#else
    return false;
#endif
}

std::string default_chat_history_file() {
    namespace fs = std::filesystem;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) return (fs::path(state) / "hetero" / "chat_history").string();
    if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".local" / "state" / "hetero" / "chat_history").string();
    return "";
}

LineReader::LineReader(bool interactive, std::string history_file, const std::atomic<bool>* interrupt)
    : interactive_(interactive), editing_(interactive && has_line_editing()), history_file_(std::move(history_file)), interrupt_(interrupt) {
#ifdef HETERO_HAVE_LIBEDIT
    if (editing_) {
        using_history();
        stifle_history(kHistoryEntries);
        if (!history_file_.empty()) read_history(history_file_.c_str());  // none yet is fine
    }
#endif
}

LineReader::~LineReader() {
#ifdef HETERO_HAVE_LIBEDIT
    if (editing_ && !history_file_.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(history_file_).parent_path(), ec);
        write_history(history_file_.c_str());  // a history that cannot be written is not worth failing a chat for
    }
#endif
}

std::optional<std::string> LineReader::read_line(const char* prompt) {
#ifdef HETERO_HAVE_LIBEDIT
    if (editing_) {
        char* raw = readline(prompt);
        if (!raw || (interrupt_ && interrupt_->load())) {
            std::free(raw);
            return std::nullopt;
        }
        std::string line(raw);
        std::free(raw);
        return line;
    }
#endif
    if (interactive_) {
        std::fputs(prompt, stdout);
        std::fflush(stdout);
    }
    std::string line;
    if (!std::getline(std::cin, line) || (interrupt_ && interrupt_->load())) return std::nullopt;
    return line;
}

std::optional<std::string> LineReader::read_message() {
    std::optional<std::string> first = read_line(kPrompt);
    if (!first) return std::nullopt;
    std::string message;
    if (*first == kBlockFence) {
        // A block: every line up to the closing fence, as typed.
        bool any = false;
        for (;;) {
            std::optional<std::string> line = read_line(kContinuationPrompt);
            if (!line) return std::nullopt;  // input ended (or Ctrl-C) inside the block: nothing is sent
            if (*line == kBlockFence) break;
            message += (any ? "\n" : "") + *line;
            any = true;
        }
    } else {
        message = *first;
        while (!message.empty() && message.back() == '\\') {
            message.back() = '\n';
            std::optional<std::string> line = read_line(kContinuationPrompt);
            if (!line) return std::nullopt;
            message += *line;
        }
    }
#ifdef HETERO_HAVE_LIBEDIT
    if (editing_ && !message.empty()) add_history(message.c_str());
#endif
    return message;
}

}  // namespace hetero::cli
