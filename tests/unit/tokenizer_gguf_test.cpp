// GGUF vocabularies against llama.cpp's tokenizer test files: every text of
// each .inp must encode to the ids on the matching line of its .out.
//
// The .inp/.out files are kept in tests/data/models/vocab. The vocabulary-only
// .gguf files are found in $HETERO_VOCAB_DIR, else in <source>/.peer/vocab
// (filled by tests/fetch_vocab.sh); the tests are skipped, saying so, when
// they are absent.
#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

namespace {

const std::string kModels = ::hetero::test::models_dir();

using ::hetero::test::vocab_dir;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The .inp format: each text is followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_texts(const std::string& path) {
    const std::string all = read_file(path);
    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    size_t pos = 0;
    for (size_t at; (at = all.find(separator, pos)) != std::string::npos; pos = at + separator.size())
        texts.push_back(all.substr(pos, at - pos));
    EXPECT_EQ(pos, all.size()) << path << " has text after its last separator";
    return texts;
}

std::vector<std::vector<int32_t>> read_ids(const std::string& path) {
    std::istringstream in(read_file(path));
    std::vector<std::vector<int32_t>> lines;
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::vector<int32_t> ids;
        for (int32_t id; words >> id;) ids.push_back(id);
        lines.push_back(std::move(ids));
    }
    return lines;
}

std::string show(const std::vector<int32_t>& ids) {
    std::string s;
    for (const int32_t id : ids) s += " " + std::to_string(id);
    return s;
}

class GgufVocab : public ::testing::TestWithParam<const char*> {
protected:
    std::unique_ptr<hetero::Tokenizer> open() {
        const std::string path = vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
        if (!std::filesystem::exists(path)) return nullptr;
        return hetero::Tokenizer::create(hetero::vocab_from_gguf(hetero::GgufFile::open(path)));
    }
};

TEST_P(GgufVocab, ReproducesLlamaCppTestFile) {
    auto tok = open();
    if (!tok)
        GTEST_SKIP() << "ggml-vocab-" << GetParam() << ".gguf not found in " << vocab_dir()
                     << ": run tests/fetch_vocab.sh, or point HETERO_VOCAB_DIR at llama.cpp's models/";
    // The texts and ids kept in tests/data/models/vocab.
    const std::string stem = kModels + "/vocab/ggml-vocab-" + GetParam() + ".gguf";
    const auto texts = read_texts(stem + ".inp");
    const auto expected = read_ids(stem + ".out");
    ASSERT_EQ(texts.size(), expected.size());
    ASSERT_GT(texts.size(), 40u);
    for (size_t i = 0; i < texts.size(); ++i) {
        // As llama.cpp's test does it: no BOS, special-token texts not parsed.
        const auto ids = tok->encode(texts[i], false, false);
        EXPECT_EQ(show(ids), show(expected[i])) << "text " << i << ": '" << texts[i] << "'";
        EXPECT_EQ(tok->decode(ids), texts[i]) << "text " << i;
    }
}

TEST_P(GgufVocab, InvalidUtf8RoundTrips) {
    auto tok = open();
    if (!tok) GTEST_SKIP() << "ggml-vocab-" << GetParam() << ".gguf not found in " << vocab_dir();
    for (const std::string text : {"\xFF\xFE", "\x80 x \x80\x80", "trunc\xE2\x82", "\xF0\x9F\x9A", "a\xED\xA0\x80z 12345"}) {
        const auto ids = tok->encode(text, false);
        for (const int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok->n_vocab());
        EXPECT_EQ(tok->decode(ids), text);
    }
}

TEST_P(GgufVocab, RandomBytesRoundTrip) {
    auto tok = open();
    if (!tok) GTEST_SKIP() << "ggml-vocab-" << GetParam() << ".gguf not found in " << vocab_dir();
    std::mt19937 rng(1234);
    for (int n = 0; n < 200; ++n) {
        std::string text(size_t(rng() % 40), '\0');
        for (char& c : text) c = char(rng() % 3 == 0 ? ' ' + rng() % 95 : rng() % 256);
        const auto ids = tok->encode(text, false, false);
        ASSERT_EQ(tok->decode(ids), text) << n;
    }
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, GgufVocab, ::testing::Values("llama-spm", "llama-bpe", "qwen2", "gpt-2"),
                         [](const auto& info) {
                             std::string name = info.param;
                             for (char& c : name) c = std::isalnum(uint8_t(c)) ? c : '_';
                             return name;
                         });

TEST(TokenizerGguf, Llama3SpecialTokens) {
    const std::string path = vocab_dir() + "/ggml-vocab-llama-bpe.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
    auto tok = hetero::Tokenizer::create(hetero::vocab_from_gguf(hetero::GgufFile::open(path)));
    EXPECT_EQ(tok->bos(), 128000);
    EXPECT_EQ(tok->token_text(tok->bos()), "<|begin_of_text|>");
    const auto plain = tok->encode("Hello world", true);
    ASSERT_FALSE(plain.empty());
    EXPECT_EQ(plain[0], 128000);  // Llama 3 adds BOS although its GGUF has no add_bos_token key
    // A special token's text in the prompt is that one token, with parsing on.
    const auto ids = tok->encode("<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", false);
    ASSERT_EQ(ids.size(), 6u);
    EXPECT_EQ(ids[0], *tok->find_token("<|start_header_id|>"));
    EXPECT_EQ(ids[2], *tok->find_token("<|end_header_id|>"));
    EXPECT_EQ(ids[5], *tok->find_token("<|eot_id|>"));
    EXPECT_TRUE(tok->is_control(ids[5]));
    EXPECT_EQ(tok->decode(ids[5]), "");
    // With parsing off it is ordinary text.
    EXPECT_GT(tok->encode("<|eot_id|>", false, false).size(), 1u);
}

TEST(TokenizerGguf, QwenAddsNoBos) {
    const std::string path = vocab_dir() + "/ggml-vocab-qwen2.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
    auto tok = hetero::Tokenizer::create(hetero::vocab_from_gguf(hetero::GgufFile::open(path)));
    EXPECT_EQ(tok->encode("Hello", true), tok->encode("Hello", false));
    EXPECT_EQ(tok->encode("<|im_start|>", true), std::vector<int32_t>{*tok->find_token("<|im_start|>")});
}

// The llama.cpp conversion of stories260K carries tok512.bin as a GGUF
// SentencePiece vocabulary: both must tokenize alike.
TEST(TokenizerGguf, Stories260kGgufMatchesTokenizerBin) {
    auto gguf = hetero::Tokenizer::create(
        hetero::vocab_from_gguf(hetero::GgufFile::open(kModels + "/stories260K-llamacpp.gguf")));
    auto bin = hetero::Tokenizer::create(hetero::vocab_from_llama2c(kModels + "/tok512.bin", 512));
    EXPECT_EQ(gguf->model(), "llama");
    EXPECT_EQ(gguf->n_vocab(), 512);
    for (const std::string text : {"Once upon a time", "", " two  spaces ", "Lily's mom said, \"Don't worry.\"\n", "日本 🚀"}) {
        EXPECT_EQ(gguf->encode(text, true, false), bin->encode(text, true)) << text;
        const auto ids = gguf->encode(text, true);
        EXPECT_EQ(gguf->decode(ids), text);
        std::string streamed;
        for (size_t i = 1; i < ids.size(); ++i) streamed += gguf->decode_next(ids[i - 1], ids[i]);
        EXPECT_EQ(streamed, text);
    }
    EXPECT_EQ(gguf->encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
}

// Tiny GGUFs crafted in memory: a small BPE vocabulary, then broken variants.
class CraftedGguf : public ::testing::Test {
protected:
    std::string path_ = hetero::test::temp_path("tokenizer_crafted.gguf").string();
    void TearDown() override { std::filesystem::remove(path_); }

    hetero::Vocab load(const hetero::GgufWriter& w) {
        w.write(path_);
        return hetero::vocab_from_gguf(hetero::GgufFile::open(path_));
    }
    static hetero::GgufWriter bpe_writer() {
        hetero::GgufWriter w;
        w.add_string("tokenizer.ggml.model", "gpt2");
        w.add_string("tokenizer.ggml.pre", "qwen2");
        // Every byte character, then merged tokens; "Ġ" (U+0120) is the space.
        std::vector<std::string> tokens{"a", "b", "c", "\xC4\xA0", "ab", "bc", "abc", "\xC4\xA0" "a", "<|end|>"};
        w.add_string_array("tokenizer.ggml.tokens", tokens);
        w.add_int32_array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 1, 1, 1, 3});
        w.add_string_array("tokenizer.ggml.merges", {"b c", "a b", "a bc", "\xC4\xA0 a"});
        w.add_uint32("tokenizer.ggml.eos_token_id", 8);
        return w;
    }
};

TEST_F(CraftedGguf, BpeMergesFollowRank) {
    auto tok = hetero::Tokenizer::create(load(bpe_writer()));
    // "b c" outranks "a b", so "abc" is a + bc -> abc; in the word " ab",
    // "a b" outranks "Ġ a", leaving Ġ + ab (there is no merge "Ġ ab").
    EXPECT_EQ(tok->encode("abc", true), (std::vector<int32_t>{6}));
    EXPECT_EQ(tok->encode("ab ab", false), (std::vector<int32_t>{4, 3, 4}));
    EXPECT_EQ(tok->encode(" ac", false), (std::vector<int32_t>{7, 2}));
    EXPECT_EQ(tok->encode("ab<|end|>", false), (std::vector<int32_t>{4, 8}));
    EXPECT_EQ(tok->decode(tok->encode("ab ab", false)), "ab ab");
    EXPECT_EQ(tok->eos(), 8);
    EXPECT_EQ(tok->bos(), -1);
    // 'd' has no token and the vocabulary no <unk>: a clear error, not a crash.
    EXPECT_THROW(tok->encode("d", false), hetero::Error);
}

TEST_F(CraftedGguf, MissingOrInconsistentKeysAreErrors) {
    hetero::GgufWriter no_model;
    no_model.add_string_array("tokenizer.ggml.tokens", {"a"});
    EXPECT_THROW(load(no_model), hetero::Error);

    hetero::GgufWriter no_tokens;
    no_tokens.add_string("tokenizer.ggml.model", "llama");
    EXPECT_THROW(load(no_tokens), hetero::Error);

    hetero::GgufWriter short_scores;
    short_scores.add_string("tokenizer.ggml.model", "llama");
    short_scores.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
    short_scores.add_float32_array("tokenizer.ggml.scores", {0.0f});
    try {
        load(short_scores);
        FAIL() << "mismatched scores must be rejected";
    } catch (const hetero::Error& e) {
        EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.scores"), std::string::npos) << e.what();
    }

    hetero::GgufWriter short_types;
    short_types.add_string("tokenizer.ggml.model", "gpt2");
    short_types.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
    short_types.add_int32_array("tokenizer.ggml.token_type", {1});
    short_types.add_string_array("tokenizer.ggml.merges", {"a b"});
    EXPECT_THROW(load(short_types), hetero::Error);

    hetero::GgufWriter bad_bos = bpe_writer();
    bad_bos.add_uint32("tokenizer.ggml.bos_token_id", 9);
    EXPECT_THROW(load(bad_bos), hetero::Error);

    hetero::GgufWriter no_merges;
    no_merges.add_string("tokenizer.ggml.model", "gpt2");
    no_merges.add_string_array("tokenizer.ggml.tokens", {"a"});
    EXPECT_THROW(load(no_merges), hetero::Error);

    hetero::GgufWriter unknown_model;
    unknown_model.add_string("tokenizer.ggml.model", "t5");
    unknown_model.add_string_array("tokenizer.ggml.tokens", {"a"});
    EXPECT_THROW(hetero::Tokenizer::create(load(unknown_model)), hetero::Error);
}

// The vocabulary rule: token texts are UTF-8, and only unknown, control
// and unused tokens may be empty. Errors name the file and the token id.
TEST_F(CraftedGguf, TokenTextsMustBeUtf8AndNonEmptyUnlessNeverProduced) {
    const auto with = [](std::vector<std::string> tokens, std::vector<int32_t> types) {
        hetero::GgufWriter w;
        w.add_string("tokenizer.ggml.model", "llama");
        w.add_float32_array("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f));
        w.add_string_array("tokenizer.ggml.tokens", tokens);
        if (!types.empty()) w.add_int32_array("tokenizer.ggml.token_type", types);
        return w;
    };
    const auto error_of = [&](const hetero::GgufWriter& w) -> std::string {
        try {
            load(w);
        } catch (const hetero::Error& e) {
            return e.what();
        }
        return "";
    };
    // Empty texts of never-produced types, multi-byte UTF-8 and byte tokens load.
    auto ok = load(with({"", "", "", "\xE2\x96\x81" "a", "\xF0\x9F\x98\x80", "<0xFF>"}, {2, 3, 5, 1, 1, 6}));
    EXPECT_NO_THROW(hetero::Tokenizer::create(ok));

    std::string e = error_of(with({"<unk>", "a", ""}, {2, 1, 1}));
    EXPECT_NE(e.find(path_), std::string::npos) << e;
    EXPECT_NE(e.find("token 2 is empty but of type normal"), std::string::npos) << e;
    // No token types: every token is normal.
    e = error_of(with({"a", ""}, {}));
    EXPECT_NE(e.find("token 1 is empty but of type normal"), std::string::npos) << e;
    EXPECT_NE(error_of(with({"a", ""}, {1, 4})).find("token 1 is empty but of type user-defined"), std::string::npos);
    EXPECT_NE(error_of(with({"a", ""}, {1, 6})).find("token 1 is empty but of type byte"), std::string::npos);

    // Not UTF-8: a stray byte, a truncated sequence, an overlong form, a surrogate.
    for (const std::string& bad : {std::string("a\xFF"), std::string("\xE2\x96"), std::string("\xC0\xAF"), std::string("\xED\xA0\x80")}) {
        e = error_of(with({"a", "b", bad}, {1, 1, 1}));
        EXPECT_NE(e.find(path_), std::string::npos) << e;
        EXPECT_NE(e.find("token 2 is not valid UTF-8"), std::string::npos) << e;
    }
    // A control token is no exception.
    EXPECT_NE(error_of(with({"\x80", "a"}, {3, 1})).find("token 0 is not valid UTF-8"), std::string::npos);
}

}  // namespace
