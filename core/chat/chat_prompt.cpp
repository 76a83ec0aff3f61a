#include <hetero/chat/chat_prompt.hpp>
#include <hetero/chat/jinja_chat_template.hpp>
#include <hetero/model/gguf.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace hetero {

namespace {

void add_unique(std::vector<int32_t>& ids, int32_t id) {
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

}  // namespace

std::vector<int32_t> end_of_turn_tokens(const Tokenizer& tokenizer, const GgufFile* gguf) {
    std::vector<int32_t> ids;
    add_unique(ids, tokenizer.eos());
    if (gguf)
        for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
            if (const auto id = gguf->get_int(key); id && *id >= 0 && *id < tokenizer.n_vocab()) add_unique(ids, int32_t(*id));
    // Markers that end a turn in the common template families; only special
    // tokens count (a normal token spelling the same text is ordinary text).
    for (const char* text : {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>"})
        if (const auto id = tokenizer.find_token(text)) {
            const TokenType type = tokenizer.type(*id);
            if (type == TokenType::Control || type == TokenType::UserDefined) add_unique(ids, *id);
        }
    return ids;
}

ChatPrompt::ChatPrompt(const ChatTemplate& tmpl, const Tokenizer& tokenizer, const GgufFile* gguf, ToolCallStyle tool_style)
    : template_(tmpl), tokenizer_(tokenizer), stop_tokens_(end_of_turn_tokens(tokenizer, gguf)), tool_style_(tool_style) {
    if (tokenizer.bos() >= 0) context_.bos_token = tokenizer.token_text(tokenizer.bos());
    if (tokenizer.eos() >= 0) context_.eos_token = tokenizer.token_text(tokenizer.eos());
}

std::string ChatPrompt::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt, const std::atomic<bool>* cancel) const {
    ChatTemplateContext ctx = context_;
    ctx.add_generation_prompt = add_generation_prompt;
    if (const auto* jinja = dynamic_cast<const JinjaChatTemplate*>(&template_); jinja && cancel) return jinja->render(messages, ctx, cancel);
    return template_.render(messages, ctx);
}

std::vector<int32_t> ChatPrompt::tokens(const std::vector<ChatMessage>& messages, const std::atomic<bool>* cancel) const {
    return encode(render(messages, true, cancel));
}

std::vector<int32_t> ChatPrompt::tokens_json(const std::string& messages_json, const std::string& tools_json,
                                             const std::atomic<bool>* cancel) const {
    const auto* jinja = dynamic_cast<const JinjaChatTemplate*>(&template_);
    if (!jinja) throw ChatTemplateError("messages with tool calls need a Jinja chat template");
    nlohmann::ordered_json variables;
    try {
        variables["messages"] = nlohmann::ordered_json::parse(messages_json);
        if (!tools_json.empty()) variables["tools"] = nlohmann::ordered_json::parse(tools_json);
    } catch (const nlohmann::json::exception& e) {
        throw ChatTemplateError(std::string("the messages or tools are not valid JSON: ") + e.what());
    }
    variables["add_generation_prompt"] = true;
    variables["bos_token"] = context_.bos_token;
    variables["eos_token"] = context_.eos_token;
    return encode(jinja->render_json(variables.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), cancel));
}

std::vector<int32_t> ChatPrompt::encode(const std::string& text) const {
    // Templates that write {{ bos_token }} themselves must not get a second one.
    const bool has_bos = !context_.bos_token.empty() && text.starts_with(context_.bos_token);
    return tokenizer_.encode(text, tokenizer_.adds_bos() && !has_bos, true);
}

}  // namespace hetero
