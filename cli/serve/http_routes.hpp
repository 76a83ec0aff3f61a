// The OpenAI-compatible HTTP API on a cpp-httplib server:
//   POST /v1/chat/completions, POST /v1/completions (JSON or server-sent events),
//   GET /v1/models, GET /health; everything else gets an OpenAI-style error.
#pragma once

#include "generation_queue.hpp"
#include "server_limits.hpp"

#include <hetero/chat/chat_prompt.hpp>

#include <httplib.h>

#include <string>

namespace hetero::serve {

struct ServedModel {
    std::string name;  // general.name, or the file's stem
    std::string stem;  // also accepted as the model's name
    int64_t created = 0;
    const Tokenizer* tokenizer = nullptr;
    const ChatPrompt* prompt = nullptr;
    int32_t n_ctx = 0;
    uint64_t default_seed = 0;
    // Set when the server stops: a chat template still rendering gives up.
    const std::atomic<bool>* stopping = nullptr;
};

void install_routes(httplib::Server& server, const ServedModel& model, GenerationQueue& queue, const ServerLimits& limits);

}  // namespace hetero::serve
