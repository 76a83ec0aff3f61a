#include <hetero/chat/chat_template.hpp>
#include <hetero/model/model.hpp>

namespace hetero {

// ChatML, the format many instruction-tuned models use; for a model trained
// without a template it is at least a consistent, readable framing.
const char* const kChatMLTemplate =
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

std::optional<std::string> chat_template_source(const ModelFile& model) {
    if (!model.gguf) return std::nullopt;
    return model.gguf->get_string("tokenizer.chat_template");
}

}  // namespace hetero
