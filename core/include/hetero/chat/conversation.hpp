// A conversation with a model: the messages so far, rendered through the
// model's chat template, answered with the KV cache kept between turns (only
// the tokens past what the cache already holds are evaluated).
#pragma once

#include <hetero/chat/chat_prompt.hpp>
#include <hetero/chat/completion.hpp>
#include <hetero/chat/prefix_cache.hpp>

#include <string>
#include <vector>

namespace hetero {

class Conversation {
public:
    // All references must outlive the Conversation.
    Conversation(PrefixCache& cache, const Tokenizer& tokenizer, const ChatPrompt& prompt);

    // A system message that opens the conversation (kept over reset()).
    void set_system(std::string text);
    // Adds the user's message and generates the reply, which becomes part of
    // the conversation (also when it was cut short). options.stop_tokens is
    // extended with the model's end-of-turn tokens.
    CompletionResult say(const std::string& user_text, CompletionOptions options,
                         const std::function<bool(std::string_view)>& on_text = {});
    // Forgets the messages (except the system one) and the cache.
    void reset();
    // Continues a conversation saved earlier: its messages replace these (a
    // leading system message becomes the system message). The cache keeps
    // what the next prompt shares with it.
    void restore(std::vector<ChatMessage> messages);

    const std::vector<ChatMessage>& messages() const { return messages_; }

private:
    PrefixCache& cache_;
    const Tokenizer& tokenizer_;
    const ChatPrompt& prompt_;
    std::string system_;
    std::vector<ChatMessage> messages_;
};

}  // namespace hetero
