#include "line_reader.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <poll.h>
#include <unistd.h>

#ifdef HETERO_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace hetero::cli {

namespace {

constexpr int kHistoryEntries = 1000;
constexpr const char* kPrompt = "> ";
constexpr const char* kContinuationPrompt = ". ";
constexpr const char* kBlockFence = "\"\"\"";

// libedit's getc hook takes no context: the reader's wake pipe and flag.
int g_wake_fd = -1;
const std::atomic<bool>* g_interrupted = nullptr;

// One byte of stdin, or EOF at its end or once Ctrl-C came. A wake byte left
// by a Ctrl-C that stopped a reply (the flag was cleared since) is drained
// and ignored. Reads what is there, up to a buffer, at a time.
int read_stdin_byte() {
    static unsigned char buffer[4096];
    static size_t at = 0, filled = 0;
    for (;;) {
        if (g_interrupted && g_interrupted->load()) return EOF;
        if (at < filled) return buffer[at++];
        pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_wake_fd, POLLIN, 0}};
        const int n = ::poll(fds, g_wake_fd >= 0 ? 2 : 1, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            return EOF;
        }
        if (g_wake_fd >= 0 && (fds[1].revents & POLLIN)) {
            char drain[64];
            while (::read(g_wake_fd, drain, sizeof drain) > 0) {
            }
            continue;  // the flag above decides
        }
        if (fds[0].revents & POLLNVAL) return EOF;  // stdin closed
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t r = ::read(STDIN_FILENO, buffer, sizeof buffer);
            if (r > 0) {
                at = 0, filled = size_t(r);
                continue;
            }
            if (r < 0 && errno == EINTR) continue;
            return EOF;
        }
    }
}

#ifdef HETERO_HAVE_LIBEDIT
int editline_getc(FILE*) { return read_stdin_byte(); }
#endif

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

LineReader::LineReader(bool interactive, std::string history_file, const std::atomic<bool>* interrupt, int wake_fd)
    : interactive_(interactive), editing_(interactive && has_line_editing()), history_file_(std::move(history_file)), interrupt_(interrupt) {
    g_wake_fd = wake_fd;
    g_interrupted = interrupt;
#ifdef HETERO_HAVE_LIBEDIT
    if (editing_) {
        rl_getc_function = editline_getc;
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
    int c = EOF;
    while ((c = read_stdin_byte()) != EOF && c != '\n') line += char(c);
    if ((c == EOF && line.empty()) || (interrupt_ && interrupt_->load())) return std::nullopt;
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
