// The tokenizer of a Hugging Face model folder as GGUF's tokenizer.*
// metadata, built as llama.cpp's converter builds it: a SentencePiece
// vocabulary from tokenizer.model, or a GPT-2-style BPE one from
// tokenizer.json, then the special tokens, whether BOS/EOS are added and
// the chat template from tokenizer_config.json, tokenizer.json and
// config.json.
#pragma once

#include "hf_config.hpp"

#include <hetero/model/gguf_writer.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetero::model_detail {

// llama.cpp's token types.
enum HfTokenType : int32_t { kTokNormal = 1, kTokUnknown = 2, kTokControl = 3, kTokUserDefined = 4, kTokUnused = 5, kTokByte = 6 };

struct GgufVocabulary {
    std::string model;  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (BPE)
    std::string pre;    // tokenizer.ggml.pre: "default", "llama-bpe", "qwen2", "gpt-2"
    std::vector<std::string> tokens;
    std::vector<float> scores;        // SentencePiece only
    std::vector<int32_t> types;       // HfTokenType per token
    std::vector<std::string> merges;  // BPE only: "left right"
    std::optional<bool> add_space_prefix;
    // ("bos", id), ("eos", id), ... in the order they were found.
    std::vector<std::pair<std::string, uint32_t>> special_ids;
    // ("bos", true), ... : whether the tokenizer adds that token.
    std::vector<std::pair<std::string, bool>> add_special;
    std::optional<std::string> chat_template;
    std::vector<std::pair<std::string, std::string>> named_chat_templates;  // (name, template) besides the default
};

// The special tokens and their settings (llama.cpp's gguf.SpecialVocab).
struct SpecialTokens {
    std::vector<std::string> merges;
    std::vector<std::pair<std::string, uint32_t>> ids;
    std::vector<std::pair<std::string, bool>> add;
    std::optional<std::string> chat_template;
    std::vector<std::pair<std::string, std::string>> named_chat_templates;
};

// Reads the tokenizer files of `dir` for a model of `config`.
GgufVocabulary read_hf_vocabulary(const std::string& dir, const HfConfig& config);

// tokenizer.json's merges (when `load_merges`), special tokens from
// tokenizer_config.json / tokenizer.json / config.json, the chat template.
// `n_vocab` (when set) bounds the special token ids.
SpecialTokens read_special_tokens(const std::string& dir, bool load_merges, std::optional<size_t> n_vocab);

// SentencePiece vocabularies (tokenizer.model), as the converter builds them
// for most architectures, and Phi-3's variant of it.
GgufVocabulary read_sentencepiece_vocabulary(const std::string& dir, const HfConfig& config);
GgufVocabulary read_phi3_sentencepiece_vocabulary(const std::string& dir, const HfConfig& config);
// GPT-2-style BPE vocabularies (tokenizer.json).
GgufVocabulary read_bpe_vocabulary(const std::string& dir, const HfConfig& config);

// Tokens llama.cpp's converter treats as control tokens even when the
// tokenizer files do not mark them special (<|...|>, <unused...>, <pad>, ...).
bool token_looks_special(const std::string& text);

// Writes every tokenizer.* key of `v`.
void add_vocabulary(GgufWriter& w, const GgufVocabulary& v);

}  // namespace hetero::model_detail
