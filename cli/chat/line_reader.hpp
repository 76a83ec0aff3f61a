// What `hetero chat` reads a message with. At a terminal (and where the
// build found libedit): line editing, and history kept between chats in a
// file. Anywhere: a message over several lines, either between two lines
// holding only """ or as lines ending in a backslash (the backslash and the
// newline become a newline in the message).
#pragma once

#include <atomic>
#include <optional>
#include <string>

namespace hetero::cli {

class LineReader {
public:
    // `interactive`: stdin is a terminal (editing and prompts only then).
    // `history_file`: where history is kept, "" for none. `interrupt` is set
    // by the SIGINT handler, which then writes a byte to `wake_fd` (the read
    // end of a non-blocking pipe, or -1): a read waits on stdin and that pipe
    // together, so a Ctrl-C ends it even when it lands before the read
    // begins, and the read returns nothing.
    LineReader(bool interactive, std::string history_file, const std::atomic<bool>* interrupt, int wake_fd);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    // The next message (its lines joined by '\n'), or nothing at the end of
    // input or on Ctrl-C. A message is added to the history once whole.
    std::optional<std::string> read_message();

    // Whether this build edits lines at a terminal (libedit).
    static bool has_line_editing();

private:
    std::optional<std::string> read_line(const char* prompt);

    bool interactive_;
    bool editing_;
    std::string history_file_;
    const std::atomic<bool>* interrupt_;
};

// Where the history goes by default: $XDG_STATE_HOME/hetero/chat_history,
// else ~/.local/state/hetero/chat_history; "" when neither can be named.
std::string default_chat_history_file();

}  // namespace hetero::cli
