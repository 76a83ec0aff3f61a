// The commands `hetero chat` takes at its prompt: /help, /reset, /save FILE,
// /load FILE, /exit (or /quit). A line that starts with '/' and names no
// command is refused rather than sent (start it with a space to send it).
#pragma once

#include <hetero/chat/conversation.hpp>

#include <string>

namespace hetero::cli {

enum class ChatCommandResult {
    not_a_command,  // an ordinary message: send it
    done,           // a command ran
    failed,         // a command was refused or failed (a message on stderr)
    quit,
};

ChatCommandResult run_chat_command(const std::string& line, Conversation& conversation, const std::string& model_name, bool quiet);

// The one-line reminder printed when a chat starts at a terminal.
const char* chat_commands_hint();

}  // namespace hetero::cli
