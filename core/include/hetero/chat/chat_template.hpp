// A chat template turns a conversation into the prompt text a model was
// trained on. JinjaChatTemplate (jinja_chat_template.hpp) is the engine:
// Jinja2 templates rendered in C++, no Python.
#pragma once

#include <hetero/error.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hetero {

class ModelFile;

struct ChatMessage {
    std::string role;  // "system", "user", "assistant", ...
    std::string content;
};

// What the template may see besides the messages.
struct ChatTemplateContext {
    bool add_generation_prompt = true;  // end with the opening of an assistant turn
    std::string bos_token, eos_token;   // texts of the vocabulary's BOS / EOS ("" when it has none)
};

// A template that refused to render: a syntax error (with its line), a
// raise_exception() of the template, or a failure while rendering.
class ChatTemplateError : public Error {
public:
    using Error::Error;
};

class ChatTemplate {
public:
    virtual ~ChatTemplate() = default;
    // Thread-safe. Throws ChatTemplateError (or hetero::Error when the engine
    // itself is unavailable).
    virtual std::string render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context) const = 0;
};

// The fallback for models without tokenizer.chat_template: ChatML
// ("<|im_start|>role\ncontent<|im_end|>\n" per message, then
// "<|im_start|>assistant\n"), written as a Jinja template so the same engine
// renders it.
extern const char* const kChatMLTemplate;

// The model's tokenizer.chat_template, if its file has one.
std::optional<std::string> chat_template_source(const ModelFile& model);

}  // namespace hetero
