// The OpenAI-compatible HTTP API on a cpp-httplib server:
//   POST /v1/chat/completions, POST /v1/completions (JSON or server-sent events),
//   POST /v1/embeddings,
//   GET /v1/models, GET /health, GET /metrics (Prometheus); everything else
//   gets an OpenAI-style error. One model is served, so a generation request
//   naming any model is answered by it, as llama.cpp's server does.
#pragma once

#include "api_key.hpp"
#include "generation_queue.hpp"
#include "server_limits.hpp"
#include "server_metrics.hpp"

#include <hetero/chat/chat_prompt.hpp>
#include <hetero/chat/embedding.hpp>

#include <httplib.h>

#include <string>
#include <vector>

namespace hetero::serve {

struct ServedModel {
    std::string name;  // general.name, or the file's stem
    std::string stem;  // also accepted as the model's name
    std::vector<std::string> aliases;  // --alias: listed by /v1/models beside the name
    int64_t created = 0;
    int64_t n_vocab = 0;  // logit_bias token ids must be below it
    const Tokenizer* tokenizer = nullptr;
    const ChatPrompt* prompt = nullptr;
    int32_t n_ctx = 0;
    int64_t n_embd = 0;               // an embedding's width
    Pooling pooling = Pooling::mean;  // how /v1/embeddings pools a text's token states
    bool embeddings = false;          // /v1/embeddings is served (not --no-embeddings)
    uint64_t default_seed = 0;
    // Set when the server stops: a chat template still rendering gives up.
    const std::atomic<bool>* stopping = nullptr;
};

// Whether `id` is the model's name, its file's stem or one of its aliases.
bool names_model(const ServedModel& model, const std::string& id);

// `api_key`: when set, /v1/* and /metrics answer only requests that carry it
// (401 otherwise); /health and CORS preflights never need it. Every response
// is counted in `metrics`.
void install_routes(httplib::Server& server, const ServedModel& model, GenerationQueue& queue, const ServerLimits& limits,
                    ServerMetrics& metrics, const ApiKey* api_key);

}  // namespace hetero::serve
