#include "pretokenizer.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace hetero {

namespace {

// Contractions are spelled with explicit case classes rather than (?i:...)
// so that Unicode case folding (e.g. the Kelvin sign) cannot widen them.
constexpr const char* kContractions = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";

// GPT-2's expression, also used when a gpt2 vocabulary names no pre-tokenizer.
const std::string kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
// Llama 3: letters with one optional leading non-letter, numbers in groups of up to three.
const std::string kLlama3 = std::string(kContractions) +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2: as Llama 3 but every digit is a word of its own.
const std::string kQwen2 = std::string(kContractions) +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace

struct Pretokenizer::Regex {
    pcre2_code* code = nullptr;
    ~Regex() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer(const std::string& name) {
    std::vector<std::string> patterns;
    if (name.empty() || name == "default" || name == "gpt-2" || name == "gpt2") {
        patterns = {kGpt2};
    } else if (name == "llama-bpe" || name == "llama3") {
        patterns = {kLlama3};
        whole_words_first_ = true;
    } else if (name == "qwen2") {
        patterns = {kQwen2};
    } else {
        throw Error(fmt::format("unknown BPE pre-tokenizer '{}' (supported: default, gpt-2, llama-bpe, llama3, qwen2)", name));
    }
    for (const std::string& pattern : patterns) {
        int code = 0;
        PCRE2_SIZE offset = 0;
        auto regex = std::make_unique<Regex>();
        regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(),
                                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
        if (!regex->code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(code, message, sizeof message);
            throw Error(fmt::format("pre-tokenizer '{}': PCRE2 rejects its expression at offset {}: {}", name, offset,
                                    reinterpret_cast<const char*>(message)));
        }
        pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);  // best effort: the interpreter gives the same matches
        regexes_.push_back(std::move(regex));
    }
}

Pretokenizer::~Pretokenizer() = default;
Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;

std::vector<std::string_view> Pretokenizer::split(std::string_view text) const {
    std::vector<std::string_view> words;
    if (!text.empty()) words.push_back(text);
    for (const auto& regex : regexes_) {
        std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
            pcre2_match_data_create_from_pattern(regex->code, nullptr), &pcre2_match_data_free);
        if (!match) throw Error("pre-tokenizer: out of memory for PCRE2 match data");
        std::vector<std::string_view> next;
        next.reserve(words.size() * 2);
        for (const std::string_view word : words) {
            const auto* subject = reinterpret_cast<PCRE2_SPTR>(word.data());
            size_t pos = 0;  // everything before pos has been emitted
            size_t from = 0;
            while (from < word.size()) {
                const int rc = pcre2_match(regex->code, subject, word.size(), from, 0, match.get(), nullptr);
                if (rc == PCRE2_ERROR_NOMATCH) break;
                if (rc < 0) {
                    PCRE2_UCHAR message[256];
                    pcre2_get_error_message(rc, message, sizeof message);
                    throw Error(fmt::format("pre-tokenizer: PCRE2 match failed: {}", reinterpret_cast<const char*>(message)));
                }
                const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
                const size_t begin = ovector[0], end = ovector[1];
                if (end <= begin) {  // none of our expressions matches empty text; never loop on one anyway
                    from = begin + 1;
                    continue;
                }
                if (begin > pos) next.push_back(word.substr(pos, begin - pos));
                next.push_back(word.substr(begin, end - begin));
                pos = from = end;
            }
            if (pos < word.size()) next.push_back(word.substr(pos));
        }
        words = std::move(next);
    }
    return words;
}

}  // namespace hetero
