// The body of POST /v1/embeddings, checked field by field: `input` (a
// string, an array of strings, an array of token ids, or an array of arrays
// of token ids), `model`, `encoding_format` (float or base64), `dimensions`
// (only the model's own width) and `user` (accepted, unused). Any other
// field, or a value out of place, is a 400 naming it.
#pragma once

#include "openai_request.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::serve {

// One input as it came: text to tokenize, or token ids as given.
struct EmbeddingInput {
    bool is_text = true;
    std::string text;
    std::vector<int32_t> tokens;
};

struct EmbeddingRequest {
    std::string model;
    std::vector<EmbeddingInput> inputs;
    bool base64 = false;                 // encoding_format "base64": little-endian float32 bytes
    std::optional<int64_t> dimensions;   // checked against the model's width by the route
};

// At most this many inputs in one request (OpenAI's limit).
inline constexpr size_t kMaxEmbeddingInputs = 2048;

// Throws ApiError 400 for anything wrong; token ids are checked to be
// non-negative here and below the vocabulary by the route.
EmbeddingRequest parse_embedding_request(const std::string& body);

}  // namespace hetero::serve
