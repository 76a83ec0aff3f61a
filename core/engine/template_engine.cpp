#include "template_engine.hpp"

#include <hetero/chat/jinja_chat_template.hpp>

namespace hetero {

std::unique_ptr<ChatTemplate> compile_chat_template(const std::string& source) {
    return std::make_unique<JinjaChatTemplate>(source);
}

}  // namespace hetero
