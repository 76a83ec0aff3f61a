// POST /v1/embeddings: each input tokenized (text as a completion prompt is,
// BOS added where the model's tokenizer adds one) or taken as token ids,
// checked against the context and the request's token budget, embedded on the
// server's worker in the sequence kept for embeddings, and answered in
// OpenAI's shape: float arrays, or base64 of little-endian float32.
#pragma once

#include "generation_queue.hpp"
#include "http_routes.hpp"

#include <httplib.h>

#include <string>
#include <vector>

namespace hetero::serve {

// At most this many tokens over all inputs of one request (OpenAI's limit).
inline constexpr int64_t kMaxEmbeddingTokens = 300000;

// Base64 (RFC 4648, padded) of the vector's float32 values, little-endian.
std::string float32_base64(const std::vector<float>& v);

void handle_embeddings(const ServedModel& model, GenerationQueue& queue, const ServerLimits& limits, const httplib::Request& req,
                       httplib::Response& res);

}  // namespace hetero::serve
