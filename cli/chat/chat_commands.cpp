#include "chat_commands.hpp"

#include "conversation_file.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace hetero::cli {

namespace {

constexpr const char* kHelp =
    "  /help          this list\n"
    "  /reset         start a new conversation (the --system message stays)\n"
    "  /save FILE     write the conversation to FILE (JSON, OpenAI-style messages)\n"
    "  /load FILE     continue a conversation saved with /save\n"
    "  /exit, /quit   leave (so do Ctrl-D and Ctrl-C at the prompt)\n"
    "  \"\"\"            on a line of its own, opens and closes a message of several lines;\n"
    "                 a line ending in \\ also goes on on the next one\n";

// The command word and its argument (the rest of the line, trimmed).
std::pair<std::string, std::string> split_command(const std::string& line) {
    const size_t space = line.find_first_of(" \t");
    if (space == std::string::npos) return {line, ""};
    const size_t arg = line.find_first_not_of(" \t", space);
    std::string rest = arg == std::string::npos ? "" : line.substr(arg);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.pop_back();
    return {line.substr(0, space), rest};
}

}  // namespace

const char* chat_commands_hint() { return "/help lists commands, \"\"\" opens a message of several lines"; }

ChatCommandResult run_chat_command(const std::string& line, Conversation& conversation, const std::string& model_name, bool quiet) {
    if (line.empty() || line[0] != '/') return ChatCommandResult::not_a_command;
    const auto [word, arg] = split_command(line);
    if (word == "/exit" || word == "/quit") return ChatCommandResult::quit;
    if (word == "/help") {
        std::fputs(kHelp, stderr);
        return ChatCommandResult::done;
    }
    if (word == "/reset") {
        conversation.reset();
        if (!quiet) fmt::print(stderr, "(conversation cleared)\n");
        return ChatCommandResult::done;
    }
    if (word == "/save" || word == "/load") {
        if (arg.empty()) {
            fmt::print(stderr, "error: {} needs a file: {} FILE\n", word, word);
            return ChatCommandResult::failed;
        }
        try {
            if (word == "/save") {
                save_conversation(arg, model_name, conversation.messages());
                if (!quiet) fmt::print(stderr, "(saved {} messages to {})\n", conversation.messages().size(), arg);
            } else {
                conversation.restore(load_conversation(arg));
                if (!quiet) fmt::print(stderr, "(loaded {} messages from {})\n", conversation.messages().size(), arg);
            }
        } catch (const Error& e) {
            fmt::print(stderr, "error: {}\n", e.what());
            return ChatCommandResult::failed;
        }
        return ChatCommandResult::done;
    }
    fmt::print(stderr, "error: unknown command {} (/help lists them; start a message with a space to send it as it is)\n", word);
    return ChatCommandResult::failed;
}

}  // namespace hetero::cli
