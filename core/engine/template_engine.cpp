#include "template_engine.hpp"

namespace hetero {

std::unique_ptr<ChatTemplate> compile_chat_template(const std::string&) {
    throw Error("chat templates: no template engine in this build");
}

}  // namespace hetero
