// hetero run --logprobs: one JSON line per sampled token with its
// log-probability and the most likely alternatives, for reading where a
// greedy generation was close to a tie (tests/arch/peer_tokens.sh does).
// Each token is {"token", "piece", "bytes", "end", "logprob"}; a line adds
// "step" and "top" (the alternatives, most likely first). "end" marks the
// end-of-generation token that stopped the run.
#pragma once

#include <hetero/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hetero::cli {

class LogprobsWriter {
public:
    // Opens `path` for writing; throws Error naming the path when it cannot.
    LogprobsWriter(const std::string& path, const Tokenizer& tokenizer, int32_t top_k);
    ~LogprobsWriter();
    LogprobsWriter(const LogprobsWriter&) = delete;
    LogprobsWriter& operator=(const LogprobsWriter&) = delete;

    // Writes the line for `token`, sampled from `logits` (log-softmax of the
    // raw logits: temperature and top-k/top-p are not applied).
    void write(const std::vector<float>& logits, int32_t token);

private:
    std::FILE* file_;
    std::string path_;
    const Tokenizer& tokenizer_;
    int32_t top_k_;
    int32_t step_ = 0;
};

}  // namespace hetero::cli
