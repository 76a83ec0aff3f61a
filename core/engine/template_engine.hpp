// The chat-template engine behind LoadedModel (private to the engine room).
#pragma once

#include <hetero/chat/chat_template.hpp>

#include <memory>
#include <string>

namespace hetero {

// Compiles a Jinja chat template; throws ChatTemplateError with its line.
std::unique_ptr<ChatTemplate> compile_chat_template(const std::string& source);

}  // namespace hetero
