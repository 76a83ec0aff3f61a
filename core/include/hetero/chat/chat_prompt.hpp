// A model's way of chatting: its template, the BOS / EOS texts the template
// sees, and the tokens that end an assistant turn.
#pragma once

#include <hetero/chat/chat_template.hpp>
#include <hetero/chat/tool_call_format.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

class GgufFile;

// EOS, tokenizer.ggml.eot_token_id / eom_token_id when the file has them, and
// the usual end-of-turn markers (<|im_end|>, <|eot_id|>, <end_of_turn>,
// <|end|>, <|endoftext|>) where the vocabulary has them as special tokens.
std::vector<int32_t> end_of_turn_tokens(const Tokenizer& tokenizer, const GgufFile* gguf);

class ChatPrompt {
public:
    // Both references must outlive the ChatPrompt. `tool_style`: the format
    // the template writes tool calls in (detect_tool_call_style of its source).
    ChatPrompt(const ChatTemplate& tmpl, const Tokenizer& tokenizer, const GgufFile* gguf,
               ToolCallStyle tool_style = ToolCallStyle::none);

    // A Jinja template stops with a ChatTemplateError soon after *cancel
    // becomes true (a server shutting down, Ctrl-C); null: no cancelling.
    std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true,
                       const std::atomic<bool>* cancel = nullptr) const;
    // The rendered text tokenized with special-token parsing; BOS is added
    // when the vocabulary wants it and the template did not write it.
    std::vector<int32_t> tokens(const std::vector<ChatMessage>& messages, const std::atomic<bool>* cancel = nullptr) const;
    // The same for messages as JSON (they may carry tool_calls, tool_call_id
    // and the like) and `tools_json`, the tools list ("" = none), rendered by
    // a Jinja template's render_json; throws ChatTemplateError for any other.
    std::vector<int32_t> tokens_json(const std::string& messages_json, const std::string& tools_json,
                                     const std::atomic<bool>* cancel = nullptr) const;
    const std::vector<int32_t>& stop_tokens() const { return stop_tokens_; }
    ToolCallStyle tool_style() const { return tool_style_; }

private:
    const ChatTemplate& template_;
    const Tokenizer& tokenizer_;
    ChatTemplateContext context_;
    std::vector<int32_t> stop_tokens_;
    ToolCallStyle tool_style_;

    std::vector<int32_t> encode(const std::string& text) const;
};

}  // namespace hetero
