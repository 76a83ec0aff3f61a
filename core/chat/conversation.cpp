#include <hetero/chat/conversation.hpp>

namespace hetero {

Conversation::Conversation(PrefixCache& cache, const Tokenizer& tokenizer, const ChatPrompt& prompt)
    : cache_(cache), tokenizer_(tokenizer), prompt_(prompt) {}

void Conversation::set_system(std::string text) {
    system_ = std::move(text);
    reset();
}

void Conversation::reset() {
    messages_.clear();
    if (!system_.empty()) messages_.push_back({"system", system_});
    cache_.clear();
}

void Conversation::restore(std::vector<ChatMessage> messages) {
    system_ = !messages.empty() && messages.front().role == "system" ? messages.front().content : "";
    messages_ = std::move(messages);
}

CompletionResult Conversation::say(const std::string& user_text, CompletionOptions options,
                                   const std::function<bool(std::string_view)>& on_text) {
    messages_.push_back({"user", user_text});
    std::vector<int32_t> tokens;
    try {
        tokens = prompt_.tokens(messages_, options.interrupt);  // an interrupt also stops a slow template
    } catch (...) {
        messages_.pop_back();  // a template that refuses the message leaves the conversation as it was
        throw;
    }
    for (int32_t id : prompt_.stop_tokens()) options.stop_tokens.push_back(id);
    CompletionResult r;
    try {
        r = complete(cache_, tokenizer_, tokens, options, on_text);
    } catch (...) {
        messages_.pop_back();
        throw;
    }
    messages_.push_back({"assistant", r.text});
    return r;
}

}  // namespace hetero
