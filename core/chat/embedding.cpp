#include <hetero/chat/embedding.hpp>
#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cmath>

namespace hetero {

const char* pooling_name(Pooling p) {
    switch (p) {
        case Pooling::mean: return "mean";
        case Pooling::last: return "last";
        case Pooling::first: return "cls";
    }
    return "?";
}

Pooling pooling_from_name(std::string_view name) {
    if (name == "mean") return Pooling::mean;
    if (name == "last") return Pooling::last;
    if (name == "cls" || name == "first") return Pooling::first;
    throw Error(fmt::format("unknown pooling '{}' (choose mean, last or cls)", name));
}

Pooling model_pooling(const LlamaHParams& hp) {
    switch (hp.pooling_type) {
        case 2: return Pooling::first;
        case 3: return Pooling::last;
        case 4: throw Error(fmt::format("the model's {}.pooling_type is rank (a reranker): it gives scores, not embeddings", hp.arch));
        default: return Pooling::mean;  // 1, and none / absent (see the header)
    }
}

std::vector<float> pool_hidden_states(const float* rows, size_t n_tokens, size_t width, Pooling pooling) {
    if (n_tokens == 0) throw Error("pooling: no token states");
    if (pooling != Pooling::mean) {
        const float* row = rows + (pooling == Pooling::last ? n_tokens - 1 : 0) * width;
        return {row, row + width};
    }
    std::vector<double> sum(width, 0.0);
    for (size_t t = 0; t < n_tokens; ++t)
        for (size_t i = 0; i < width; ++i) sum[i] += rows[t * width + i];
    std::vector<float> out(width);
    for (size_t i = 0; i < width; ++i) out[i] = float(sum[i] / double(n_tokens));
    return out;
}

void l2_normalize(std::vector<float>& v) {
    double sq = 0;
    for (float x : v) sq += double(x) * double(x);
    if (sq == 0) return;
    const double inv = 1.0 / std::sqrt(sq);
    for (float& x : v) x = float(double(x) * inv);
}

std::vector<float> embed_tokens(BatchEvaluator& evaluator, int32_t seq, const std::vector<int32_t>& tokens, const EmbeddingOptions& options) {
    if (tokens.empty()) throw Error("an embedding needs at least one token");
    if (int64_t(tokens.size()) > evaluator.n_ctx())
        throw Error(fmt::format("{} tokens do not fit the context of {}", tokens.size(), evaluator.n_ctx()));
    const std::vector<float>& hidden = evaluator.hidden_states(seq, tokens, 0);
    std::vector<float> v = pool_hidden_states(hidden.data(), tokens.size(), hidden.size() / tokens.size(), options.pooling);
    if (options.normalize) l2_normalize(v);
    return v;
}

}  // namespace hetero
