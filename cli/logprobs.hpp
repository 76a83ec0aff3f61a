// Log-probabilities of sampled tokens: what `hetero run --logprobs` writes
// (one JSON line per token, for reading where a greedy generation was close
// to a tie; tests/arch/peer_tokens.sh does) and `hetero serve` returns for
// OpenAI's `logprobs`.
#pragma once

#include <hetero/tokenizer/tokenizer.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace hetero::cli {

// One sampled token with the most likely tokens of its step (log-softmax of
// the raw logits: temperature and top-k/top-p are not applied).
struct TokenLogprobs {
    int32_t token = 0;
    double logprob = 0;
    std::vector<std::pair<int32_t, double>> top;  // most likely first; ties by id
};
TokenLogprobs token_logprobs(const std::vector<float>& logits, int32_t token, int32_t top_k);

// Each line is {"token", "piece", "bytes", "end", "logprob"} plus "step" and
// "top" (the alternatives, the same fields each). "bytes" holds the piece
// exactly (byte tokens are not UTF-8 on their own: "piece" shows U+FFFD);
// "end" marks the end-of-generation token that stopped the run.
class LogprobsWriter {
public:
    // Opens `path` for writing; throws Error naming the path when it cannot.
    LogprobsWriter(const std::string& path, const Tokenizer& tokenizer, int32_t top_k);
    ~LogprobsWriter();
    LogprobsWriter(const LogprobsWriter&) = delete;
    LogprobsWriter& operator=(const LogprobsWriter&) = delete;

    void write(const std::vector<float>& logits, int32_t token);

private:
    std::FILE* file_;
    std::string path_;
    const Tokenizer& tokenizer_;
    int32_t top_k_;
    int32_t step_ = 0;
};

}  // namespace hetero::cli
