// What `hetero chat` and `hetero serve` share: their model flags, and the
// library's LoadedModel opened from them (the model's chat template, or the
// ChatML fallback with a notice on stderr).
#pragma once

#include "common.hpp"

#include <hetero/engine/loaded_model.hpp>

#include <memory>
#include <string>

namespace hetero::cli {

struct ChatModelOptions {
    ProviderFlags providers;
    std::string model, tokenizer;
    int32_t ctx = 0;
    std::string cache_type = "auto";
    std::string chat_template_file;  // overrides the model's template
    int32_t n_seq = 1;               // sequences the KV cache holds (serve's slots)
    int32_t verify = 0;              // --verify N: spot checks against the cpu provider
    bool renders_chat = true;        // false (embed): no notice about the ChatML fallback
};

struct ChatModel {
    Runtime runtime;
    std::unique_ptr<LoadedModel> model;  // model, plan, session, prefix cache, chat template
};

// -m/--tokenizer, -c, --cache-type, --chat-template, --verify and the provider flags.
void add_chat_model_options(CLI::App& cmd, ChatModelOptions& o);

// Opens everything; `expected_reply` sizes the plan's decode part. Prints the
// plan to stderr unless quiet.
std::unique_ptr<ChatModel> open_chat_model(const ChatModelOptions& o, int32_t expected_reply, bool quiet);

}  // namespace hetero::cli
