// Chat templates rendered by hetero's own Jinja engine (core/chat/jinja/), a
// C++ implementation of the Jinja2 subset chat templates use. It renders
// byte for byte what Jinja2 renders as Hugging Face transformers configures
// it: an immutable sandbox, trim_blocks and lstrip_blocks, the loop controls
// extension, tojson keeping non-ASCII text, raise_exception(msg),
// strftime_now(fmt) and tools = None.
#pragma once

#include <hetero/chat/chat_template.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetero {

// What one render may spend; a template that goes past any of these fails
// with a ChatTemplateError naming the budget.
struct JinjaLimits {
    std::chrono::milliseconds time_limit{2000};  // wall time of one render
    uint64_t max_steps = 10'000'000;             // statements, expressions, loop iterations and calls
    uint64_t max_output_bytes = 8u << 20;        // the rendered text
    uint64_t max_value_bytes = 8u << 20;         // any one string built while rendering
    uint64_t max_items = 1'000'000;              // any one list or dict built while rendering
    int max_depth = 500;                         // nesting of expressions, statements and macro calls
};

class JinjaChatTemplate : public ChatTemplate {
public:
    // Parses `source`; throws ChatTemplateError for a syntax error, with its line.
    explicit JinjaChatTemplate(const std::string& source, JinjaLimits limits = {});
    ~JinjaChatTemplate() override;
    JinjaChatTemplate(const JinjaChatTemplate&) = delete;
    JinjaChatTemplate& operator=(const JinjaChatTemplate&) = delete;

    // Thread-safe. Variables: messages (role, content), add_generation_prompt,
    // bos_token, eos_token, tools = None.
    std::string render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context) const override;
    // The same; rendering stops with a ChatTemplateError soon after *cancel becomes true.
    std::string render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context,
                       const std::atomic<bool>* cancel) const;
    // Renders with the variables of a JSON object (messages may then carry
    // tool calls and other fields); `tools` is None unless given.
    std::string render_json(const std::string& variables_json, const std::atomic<bool>* cancel = nullptr) const;

private:
    struct Parsed;
    std::unique_ptr<Parsed> parsed_;
    JinjaLimits limits_;
};

}  // namespace hetero
