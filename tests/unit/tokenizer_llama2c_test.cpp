// llama2.c tokenizer.bin: the reference prompt ids, round trips through the
// Llama 2 vocabulary, streaming decode, and hostile inputs.
#include <hetero/error.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace {

const std::string kModels = ::hetero::test::models_dir();

std::unique_ptr<hetero::Tokenizer> open_llama2c(const std::string& file, int32_t vocab_size) {
    return hetero::Tokenizer::create(hetero::vocab_from_llama2c(kModels + "/" + file, vocab_size));
}

std::string decode_stream(const hetero::Tokenizer& tok, const std::vector<int32_t>& ids) {
    std::string text;
    for (size_t i = 1; i < ids.size(); ++i) text += tok.decode_next(ids[i - 1], ids[i]);
    return text;
}

TEST(TokenizerLlama2c, ReferencePromptIds) {
    auto tok = open_llama2c("tok512.bin", 512);
    EXPECT_EQ(tok->n_vocab(), 512);
    EXPECT_EQ(tok->bos(), 1);
    EXPECT_EQ(tok->eos(), 2);
    // The reference generation (tests/data/models/reference) starts with the prompt's ids.
    const std::vector<int32_t> expected{1, 403, 407, 261, 378};
    EXPECT_EQ(tok->encode("Once upon a time", true), expected);
    EXPECT_EQ(decode_stream(*tok, expected), "Once upon a time");
    EXPECT_EQ(tok->decode(expected), "Once upon a time");
    // The reference continuation decodes to the reference text's opening words.
    const std::vector<int32_t> more{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};
    EXPECT_EQ(decode_stream(*tok, more), "Once upon a time, there was a little girl named Lily.");
    EXPECT_EQ(tok->encode("Once upon a time, there was a little girl named Lily.", true), more);
}

TEST(TokenizerLlama2c, EmptyTextHasNoDummySpace) {
    auto tok = open_llama2c("tok512.bin", 512);
    EXPECT_EQ(tok->encode("", true), std::vector<int32_t>{1});
    EXPECT_TRUE(tok->encode("", false).empty());
    EXPECT_EQ(tok->decode(std::vector<int32_t>{1}), "");
}

TEST(TokenizerLlama2c, ByteFallbackIsBytePlusThree) {
    auto tok = open_llama2c("tok512.bin", 512);
    // tok512 has no token for "ж" (d0 b6): two byte tokens follow the dummy space.
    ASSERT_FALSE(tok->find_token("\xD0\xB6"));
    const auto ids = tok->encode("\xD0\xB6", false);
    EXPECT_EQ(ids, (std::vector<int32_t>{*tok->find_token(" "), 0xD0 + 3, 0xB6 + 3}));
    EXPECT_EQ(tok->decode(0xD0 + 3), "\xD0");
    EXPECT_TRUE(tok->is_byte(0xD0 + 3));
    EXPECT_EQ(tok->decode(ids), "\xD0\xB6");
}

TEST(TokenizerLlama2c, Llama2RoundTrips) {
    auto tok = open_llama2c("tokenizer.bin", 32000);
    const std::vector<std::string> texts{
        "Hello world",
        " leading space and  two  spaces   ",
        "Tabs\tand\nnewlines\n\n",
        "Ünïcödé: ½ € ∑ 日本語のテキスト, Ελληνικά, русский, العربية",
        "emoji 🚀😶‍🌫️👨‍👩‍👧 and ✅",
        "rare bytes \x01\x02\x7f and Khmer ស្វាគមន៍",
        "1234567890 3.14159 -42",
        "<s> is not parsed as BOS by llama2.c",
        std::string("a\0b", 3),
    };
    for (const std::string& text : texts) {
        const auto ids = tok->encode(text, true);
        ASSERT_FALSE(ids.empty());
        EXPECT_EQ(ids[0], 1);
        EXPECT_EQ(tok->decode(ids), text) << text;
        EXPECT_EQ(decode_stream(*tok, ids), text) << text;
    }
}

TEST(TokenizerLlama2c, Llama2KnownIds) {
    auto tok = open_llama2c("tokenizer.bin", 32000);
    // Llama 2 ids: "▁Hello" 15043, "▁world" 3186; "!" 29991.
    EXPECT_EQ(tok->encode("Hello world!", true), (std::vector<int32_t>{1, 15043, 3186, 29991}));
}

TEST(TokenizerLlama2c, InvalidUtf8GoesThroughByteFallback) {
    auto tok = open_llama2c("tokenizer.bin", 32000);
    const std::vector<std::string> hostile{
        "\xFF\xFE", "\x80\x80\x80\x80\x80", "trunc\xE2\x82", "\xF0\x9F\x9A", "\xC0\xAF overlong", "a\xED\xA0\x80z",
    };
    for (const std::string& text : hostile) {
        const auto ids = tok->encode(text, false);
        EXPECT_EQ(tok->decode(ids), text);
        for (const int32_t id : ids) EXPECT_TRUE(id >= 0 && id < tok->n_vocab());
    }
}

TEST(TokenizerLlama2c, RandomBytesRoundTrip) {
    auto tok = open_llama2c("tokenizer.bin", 32000);
    std::mt19937 rng(42);
    for (int n = 0; n < 300; ++n) {
        std::string text(size_t(rng() % 48), '\0');
        for (char& c : text) c = char(rng() % 3 == 0 ? ' ' + rng() % 95 : rng() % 256);
        const auto ids = tok->encode(text, true);
        ASSERT_EQ(tok->decode(ids), text) << n;
    }
}

TEST(TokenizerLlama2c, BadFilesAndIdsAreErrors) {
    const auto dir = hetero::test::temp_path("tokenizer_test");
    std::filesystem::create_directories(dir);
    std::ifstream in(kModels + "/tok512.bin", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 100u);
    for (const size_t keep : {size_t(0), size_t(2), size_t(4), size_t(10), bytes.size() / 2, bytes.size() - 1}) {
        const auto path = (dir / ("truncated_" + std::to_string(keep) + ".bin")).string();
        std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(keep));
        EXPECT_THROW(hetero::vocab_from_llama2c(path, 512), hetero::Error) << keep;
    }
    EXPECT_THROW(hetero::vocab_from_llama2c(kModels + "/tok512.bin", 513), hetero::Error);
    EXPECT_THROW(hetero::vocab_from_llama2c(kModels + "/no-such-tokenizer.bin", 512), hetero::Error);
    std::filesystem::remove_all(dir);

    auto tok = open_llama2c("tok512.bin", 512);
    EXPECT_THROW(tok->decode(512), hetero::Error);
    EXPECT_THROW(tok->decode(-1), hetero::Error);
}

// The vocabulary rule of GGUF vocabularies holds for tokenizer.bin too:
// ids 3 and up are normal or byte tokens, so an empty or non-UTF-8 text there
// is refused, naming the file and the id.
TEST(TokenizerLlama2c, EmptyOrNonUtf8TokenIsAnError) {
    const auto path = hetero::test::temp_path("tokenizer_rule.bin").string();
    const auto write = [&](const std::vector<std::string>& tokens) {
        std::ofstream out(path, std::ios::binary);
        const int32_t max_len = 8;
        out.write(reinterpret_cast<const char*>(&max_len), 4);
        for (const std::string& t : tokens) {
            const float score = 0.0f;
            const int32_t len = int32_t(t.size());
            out.write(reinterpret_cast<const char*>(&score), 4);
            out.write(reinterpret_cast<const char*>(&len), 4);
            out.write(t.data(), len);
        }
    };
    const auto error_of = [&](const std::vector<std::string>& tokens) -> std::string {
        write(tokens);
        try {
            hetero::vocab_from_llama2c(path, int32_t(tokens.size()));
        } catch (const hetero::Error& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error_of({"<unk>", "\n<s>\n", "\n</s>\n", "<0x0A>", " a"}), "");
    // <unk>, BOS and EOS are unknown and control tokens: empty is allowed.
    EXPECT_EQ(error_of({"", "", "", " a"}), "");
    std::string e = error_of({"<unk>", "<s>", "</s>", " a", ""});
    EXPECT_NE(e.find(path), std::string::npos) << e;
    EXPECT_NE(e.find("token 4 is empty"), std::string::npos) << e;
    e = error_of({"<unk>", "<s>", "</s>", "\xFF"});
    EXPECT_NE(e.find("token 3 is not valid UTF-8"), std::string::npos) << e;
    std::filesystem::remove(path);
}

TEST(TokenizerCreate, UnknownModelAndBadVocabAreErrors) {
    hetero::Vocab v;
    v.model = "wordpiece";
    v.tokens = {"a", "b"};
    try {
        hetero::Tokenizer::create(v);
        FAIL() << "an unknown model must be rejected";
    } catch (const hetero::Error& e) {
        EXPECT_NE(std::string(e.what()).find("wordpiece"), std::string::npos);
    }
    v.model = "llama";
    v.scores = {0.0f};  // one score for two tokens
    EXPECT_THROW(hetero::Tokenizer::create(v), hetero::Error);
    v.scores = {0.0f, 0.0f};
    v.bos = 7;
    EXPECT_THROW(hetero::Tokenizer::create(v), hetero::Error);
    v.bos = -1;
    v.model = "gpt2";
    v.merges = {"ab"};  // no separator
    EXPECT_THROW(hetero::Tokenizer::create(v), hetero::Error);
    v.merges = {"a b"};
    v.pre = "no-such-pre";
    EXPECT_THROW(hetero::Tokenizer::create(v), hetero::Error);
}

TEST(TokenizerSentencePiece, NoTokenNoByteNoUnkIsAnError) {
    hetero::Vocab v;
    v.model = "llama";
    v.tokens = {"\xE2\x96\x81", "a"};
    v.scores = {0.0f, 0.0f};
    auto tok = hetero::Tokenizer::create(v);
    EXPECT_EQ(tok->encode("a a", false), (std::vector<int32_t>{0, 1, 0, 1}));
    EXPECT_THROW(tok->encode("b", false), hetero::Error);
    v.tokens.push_back("<unk>");
    v.scores.push_back(0.0f);
    v.unk = 2;
    tok = hetero::Tokenizer::create(v);
    EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
