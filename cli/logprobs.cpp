#include "logprobs.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>

namespace hetero::cli {

TokenLogprobs token_logprobs(const std::vector<float>& logits, int32_t token, int32_t top_k) {
    // log p_i = l_i - max - log(sum exp(l_j - max)), summed in double.
    const float max = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l) - max);
    const double log_sum = std::log(sum);
    const auto logprob = [&](int32_t t) { return double(logits[size_t(t)]) - max - log_sum; };

    TokenLogprobs r;
    r.token = token;
    r.logprob = logprob(token);
    const size_t k = std::min(size_t(std::max(top_k, 0)), logits.size());
    std::vector<int32_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + ptrdiff_t(k), ids.end(), [&](int32_t a, int32_t b) {
        return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
    });
    for (size_t i = 0; i < k; ++i) r.top.emplace_back(ids[i], logprob(ids[i]));
    return r;
}

LogprobsWriter::LogprobsWriter(const std::string& path, const Tokenizer& tokenizer, int32_t top_k)
    : file_(std::fopen(path.c_str(), "w")), path_(path), tokenizer_(tokenizer), top_k_(top_k) {
    if (!file_) throw Error(fmt::format("--logprobs: cannot write {}: {}", path, std::strerror(errno)));
}

LogprobsWriter::~LogprobsWriter() { std::fclose(file_); }

void LogprobsWriter::write(const std::vector<float>& logits, int32_t token) {
    const TokenLogprobs lp = token_logprobs(logits, token, top_k_);
    const auto describe = [&](int32_t t, double logprob) {
        const std::string piece = tokenizer_.decode(t);
        return nlohmann::json{{"token", t},
                              {"piece", piece},
                              {"bytes", std::vector<uint8_t>(piece.begin(), piece.end())},
                              {"end", t == tokenizer_.eos() || t == tokenizer_.bos()},
                              {"logprob", logprob}};
    };
    nlohmann::json top = nlohmann::json::array();
    for (const auto& [t, logprob] : lp.top) top.push_back(describe(t, logprob));
    nlohmann::json line = describe(token, lp.logprob);
    line["step"] = step_++;
    line["top"] = std::move(top);
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (std::fprintf(file_, "%s\n", text.c_str()) < 0 || std::fflush(file_) != 0)
        throw Error(fmt::format("--logprobs: writing {} failed: {}", path_, std::strerror(errno)));
}

}  // namespace hetero::cli
