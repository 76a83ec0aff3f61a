// Embeddings: a text's tokens through the model up to the final norm (the
// output head's vocabulary matmul is skipped), the token states pooled into
// one vector, L2-normalised by default (unit vectors, as OpenAI's are).
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/runtime/session.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace hetero {

// How the token states of a text become one vector: their mean, the last
// token's (what a causal model has read everything by), or the first's
// ("cls": the BOS token's, for models trained to put a summary there).
enum class Pooling { mean, last, first };

const char* pooling_name(Pooling p);  // "mean", "last", "cls"
// "mean", "last", "cls" or "first"; throws hetero::Error naming the choices.
Pooling pooling_from_name(std::string_view name);
// The pooling the model's GGUF asks for (<arch>.pooling_type: 1 mean, 2 cls,
// 3 last), else mean: decoder models carry no key, and 0 (none, one vector
// per token) has no single vector to give. Throws hetero::Error for 4
// (rank: a reranker's score, not an embedding).
Pooling model_pooling(const LlamaHParams& hp);

struct EmbeddingOptions {
    Pooling pooling = Pooling::mean;
    bool normalize = true;  // scale to unit L2 norm
};

// Pools `n_tokens` rows of `width` floats (row-major) into one vector,
// summing in double precision.
std::vector<float> pool_hidden_states(const float* rows, size_t n_tokens, size_t width, Pooling pooling);
// Scales `v` to unit L2 norm; a zero vector stays zero.
void l2_normalize(std::vector<float>& v);

// The embedding of `tokens` (never empty, at most the context): evaluated
// in sequence `seq` of `evaluator` from position 0, which overwrites that
// sequence's KV cache; use a sequence no completion holds.
std::vector<float> embed_tokens(BatchEvaluator& evaluator, int32_t seq, const std::vector<int32_t>& tokens, const EmbeddingOptions& options = {});

}  // namespace hetero
