// Splits text into words before byte-level BPE, with the regular
// expressions of each model family (PCRE2, UTF + Unicode properties).
// Text no expression matches is kept as words of its own, so every byte of
// the input (invalid UTF-8 included) reaches the BPE stage.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

class Pretokenizer {
public:
    // `name` is GGUF's tokenizer.ggml.pre; unknown names are an error.
    explicit Pretokenizer(const std::string& name);
    ~Pretokenizer();
    Pretokenizer(Pretokenizer&&) noexcept;
    Pretokenizer& operator=(Pretokenizer&&) noexcept;

    // Words as views into `text`, in order, covering all of it.
    std::vector<std::string_view> split(std::string_view text) const;

    // llama-3 style vocabularies emit a whole word as one token when the
    // vocabulary holds it, without running the merges.
    bool whole_words_first() const { return whole_words_first_; }

private:
    struct Regex;
    std::vector<std::unique_ptr<Regex>> regexes_;  // applied one after another to each word
    bool whole_words_first_ = false;
};

}  // namespace hetero
