// `hetero chat`'s /save and /load: a conversation as a JSON file,
//   {"format": "hetero-chat/1", "model": "<name>", "messages": [{"role": ..., "content": ...}, ...]}
// with the messages as the OpenAI API writes them, so other tools can read
// and write it. Loading is strict: a bad file is refused with its name and
// the offending entry, never half-loaded.
#pragma once

#include <hetero/chat/chat_template.hpp>

#include <string>
#include <vector>

namespace hetero::cli {

// Writes atomically (a reader sees the old file or the new one).
// Throws hetero::Error naming the file.
void save_conversation(const std::string& path, const std::string& model_name, const std::vector<ChatMessage>& messages);

// Reads and checks: roles "system" (first only), "user" or "assistant";
// contents are strings. Throws hetero::Error naming the file and entry.
std::vector<ChatMessage> load_conversation(const std::string& path);

}  // namespace hetero::cli
