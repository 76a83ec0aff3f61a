// Chat templates rendered by Jinja2 itself (python3-jinja2, the engine the
// templates are written for), in a sandbox, through an embedded Python.
#pragma once

#include <hetero/chat/chat_template.hpp>

#include <memory>
#include <string>

namespace hetero {

class JinjaChatTemplate : public ChatTemplate {
public:
    // Compiles `source` in an ImmutableSandboxedEnvironment (trim_blocks,
    // lstrip_blocks, loop controls) with the globals templates expect:
    // raise_exception(msg), strftime_now(fmt), tools = None. Throws
    // ChatTemplateError for a syntax error (with its line) and hetero::Error
    // when Python or python3-jinja2 is missing.
    explicit JinjaChatTemplate(const std::string& source);
    ~JinjaChatTemplate() override;
    JinjaChatTemplate(const JinjaChatTemplate&) = delete;
    JinjaChatTemplate& operator=(const JinjaChatTemplate&) = delete;

    std::string render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context) const override;

private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
};

}  // namespace hetero
