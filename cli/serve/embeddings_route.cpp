#include "embeddings_route.hpp"

#include "connection_stream.hpp"
#include "embedding_request.hpp"
#include "error_response.hpp"
#include "openai_response.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>

namespace hetero::serve {

using nlohmann::json;

std::string float32_base64(const std::vector<float>& v) {
    static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes(v.size() * 4, '\0');
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t u = std::bit_cast<uint32_t>(v[i]);
        for (int b = 0; b < 4; ++b, u >>= 8) bytes[i * 4 + size_t(b)] = char(u & 0xff);
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t group = 0;
        for (size_t k = 0; k < 3; ++k) group = group << 8 | (k < n ? uint8_t(bytes[i + k]) : 0u);
        for (size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(group >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
}

namespace {

// Every input's tokens, refused when one is empty, too long for the context,
// holds an id outside the vocabulary, or all of them exceed the budget.
std::vector<std::vector<int32_t>> input_tokens(const ServedModel& m, const EmbeddingRequest& r) {
    std::vector<std::vector<int32_t>> out;
    int64_t total = 0;
    const bool many = r.inputs.size() > 1;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
        const EmbeddingInput& in = r.inputs[i];
        const std::string where = many ? fmt::format("'input'[{}]", i) : "'input'";
        std::vector<int32_t> tokens = in.is_text ? m.tokenizer->encode(in.text, m.tokenizer->adds_bos(), true) : in.tokens;
        if (tokens.empty()) throw invalid_request(fmt::format("{} encodes to no tokens", where), "input");
        for (int32_t t : tokens)
            if (t >= m.n_vocab) throw invalid_request(fmt::format("{} holds token id {}, outside the vocabulary of {}", where, t, m.n_vocab), "input");
        if (int64_t(tokens.size()) > m.n_ctx)
            throw invalid_request(fmt::format("{} has {} tokens; this model's maximum context length is {} tokens", where, tokens.size(), m.n_ctx),
                                  "input", "context_length_exceeded");
        total += int64_t(tokens.size());
        if (total > kMaxEmbeddingTokens)
            throw invalid_request(fmt::format("the inputs have more than {} tokens together; send them in several requests", kMaxEmbeddingTokens),
                                  "input");
        out.push_back(std::move(tokens));
    }
    return out;
}

}  // namespace

void handle_embeddings(const ServedModel& m, GenerationQueue& queue, const ServerLimits& limits, const httplib::Request& req,
                       httplib::Response& res) {
    try {
        if (req.body.size() > limits.max_body_bytes)
            throw ApiError(413, "invalid_request_error",
                           fmt::format("the request body is too large ({} bytes; at most {})", req.body.size(), limits.max_body_bytes));
        if (!m.embeddings)
            throw ApiError(404, "invalid_request_error", "this server has no /v1/embeddings (it was started with --no-embeddings, or its model is a reranker)", "",
                           "embeddings_disabled");
        const EmbeddingRequest r = parse_embedding_request(req.body);
        if (r.dimensions && *r.dimensions != m.n_embd)
            throw invalid_request(fmt::format("'dimensions' must be this model's width, {}: its embeddings cannot be shortened", m.n_embd), "dimensions");
        std::vector<std::vector<int32_t>> inputs = input_tokens(m, r);
        int64_t n_tokens = 0;
        for (const auto& t : inputs) n_tokens += int64_t(t.size());
        auto job = queue.submit_embedding(std::move(inputs), {m.pooling, true});
        while (!job->wait_for_end(std::chrono::milliseconds(100))) {
            const ConnectionStream* connection = ConnectionStream::current();
            if (connection && connection->peer_closed()) job->cancel();
        }
        const std::vector<std::vector<float>>& vectors = job->wait();
        json data = json::array();
        for (size_t i = 0; i < vectors.size(); ++i)
            data.push_back({{"object", "embedding"},
                            {"index", i},
                            {"embedding", r.base64 ? json(float32_base64(vectors[i])) : json(vectors[i])}});
        const json body = {{"object", "list"},
                           {"data", std::move(data)},
                           {"model", names_model(m, r.model) ? r.model : m.name},
                           {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}}};
        res.set_content(to_text(body), "application/json");
    } catch (const std::exception&) {
        send_current_exception(res);
    }
}

}  // namespace hetero::serve
