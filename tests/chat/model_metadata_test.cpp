// What a GGUF says about chatting: its tokenizer.chat_template and its
// end-of-turn token id; end-of-turn texts count only as special tokens.
#include <hetero/chat/chat_prompt.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/model.hpp>

#include <gtest/gtest.h>

#include <filesystem>

using namespace hetero;

namespace {

std::unique_ptr<Tokenizer> tokenizer_with(const std::vector<std::pair<std::string, int32_t>>& specials) {
    Vocab v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>"};
    v.types = {2, 3, 3};
    for (const auto& [text, type] : specials) {
        v.tokens.push_back(text);
        v.types.push_back(type);
    }
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back("<0x" + std::string(1, "0123456789ABCDEF"[b >> 4]) + std::string(1, "0123456789ABCDEF"[b & 15]) + ">");
        v.types.push_back(6);
    }
    v.scores.assign(v.tokens.size(), 0.f);
    v.unk = 0, v.bos = 1, v.eos = 2;
    return Tokenizer::create(std::move(v));
}

}  // namespace

TEST(ChatMetadata, TemplateAndEndOfTurnIdFromTheFile) {
    const std::string path = (std::filesystem::temp_directory_path() / "hetero_chat_metadata_test.gguf").string();
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_string("tokenizer.chat_template", "{{ messages[0].content }}");
    w.add_uint32("tokenizer.ggml.eot_token_id", 3);
    w.write(path);
    ModelFile model;
    model.gguf = GgufFile::open(path);
    std::filesystem::remove(path);
    EXPECT_EQ(chat_template_source(model), "{{ messages[0].content }}");

    // Id 3 ("<turn_end>", a name no list knows) ends turns because the file
    // says so; "<|eot_id|>" is a normal token here and does not.
    const auto tok = tokenizer_with({{"<turn_end>", 3}, {"<|eot_id|>", 1}, {"<|im_end|>", 3}});
    const std::vector<int32_t> ids = end_of_turn_tokens(*tok, &*model.gguf);
    EXPECT_NE(std::find(ids.begin(), ids.end(), 2), ids.end());  // EOS
    EXPECT_NE(std::find(ids.begin(), ids.end(), 3), ids.end());  // from the file
    EXPECT_EQ(std::find(ids.begin(), ids.end(), 4), ids.end());  // normal token
    EXPECT_NE(std::find(ids.begin(), ids.end(), 5), ids.end());  // control <|im_end|>

    ModelFile no_gguf;
    EXPECT_FALSE(chat_template_source(no_gguf).has_value());
}
