// llama2.c checkpoints and tokenizer.bin: the real stories260K files and
// damaged copies of them.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/llama2c.hpp>
#include <hetero/model/model.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace hetero {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

const std::string kModels = ::hetero::test::models_dir();
const std::string kBin = kModels + "/stories260K.bin";
const std::string kTok = kModels + "/tok512.bin";

std::string temp_path(const std::string& name) { return test::temp_path("llama2c_" + name).string(); }

Bytes read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const Bytes& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

float float_at(const Bytes& b, size_t index) {
    float v;
    std::memcpy(&v, b.data() + 28 + index * 4, 4);
    return v;
}

TEST(Llama2cReader, Stories260KHyperParameters) {
    const Llama2cConfig c = read_llama2c_config(kBin);
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.hidden_dim, 172);
    EXPECT_EQ(c.n_layers, 5);
    EXPECT_EQ(c.n_heads, 8);
    EXPECT_EQ(c.n_kv_heads, 4);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.seq_len, 512);
    EXPECT_TRUE(c.shared_classifier);

    const ModelFile m = load_model(kBin);
    EXPECT_EQ(m.format, ModelFormat::LLAMA2C);
    EXPECT_FALSE(m.gguf.has_value());
    const LlamaHParams& hp = m.hparams;
    EXPECT_EQ(hp.arch, "llama");
    EXPECT_EQ(hp.n_vocab, 512);
    EXPECT_EQ(hp.n_embd, 64);
    EXPECT_EQ(hp.n_layer, 5);
    EXPECT_EQ(hp.n_head, 8);
    EXPECT_EQ(hp.n_head_kv, 4);
    EXPECT_EQ(hp.n_ff, 172);
    EXPECT_EQ(hp.n_ctx_train, 512);
    EXPECT_EQ(hp.head_dim, 8);
    EXPECT_EQ(hp.rope_dims, 8);
    EXPECT_EQ(hp.rope_freq_base, 10000.f);
    EXPECT_EQ(hp.norm_eps, 1e-5f);
    EXPECT_EQ(hp.rope_mode, HETERO_ROPE_ADJACENT);
    EXPECT_TRUE(hp.tied_output);
    EXPECT_EQ(m.weights.size(), 2u + 9 * 5);
    EXPECT_FALSE(m.has("output.weight"));
    EXPECT_EQ(m.weight("blk.4.ffn_down.weight").shape, (std::vector<int64_t>{64, 172}));
    EXPECT_EQ(m.weight("blk.0.attn_k.weight").shape, (std::vector<int64_t>{32, 64}));
    for (const auto& [name, w] : m.weights) {
        EXPECT_EQ(w.dtype, HETERO_DTYPE_F32) << name;
        uint64_t n = 4;
        for (int64_t d : w.shape) n *= uint64_t(d);
        EXPECT_EQ(w.bytes, n) << name;
    }
    try {
        m.weight("blk.9.attn_q.weight");
        ADD_FAILURE() << "missing tensor accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("blk.9.attn_q.weight"), std::string::npos);
    }

    // Views point at the documented places in the file (zero copy).
    const Bytes file = read_file(kBin);
    const size_t D = 64, V = 512, L = 5, F = 172, KV = 32;
    auto view_float = [&](const std::string& name, size_t i) {
        float v;
        std::memcpy(&v, m.weight(name).data + i * 4, 4);
        return v;
    };
    EXPECT_EQ(view_float("token_embd.weight", 77), float_at(file, 77));
    EXPECT_EQ(view_float("blk.0.attn_norm.weight", 3), float_at(file, V * D + 3));
    EXPECT_EQ(view_float("blk.2.attn_q.weight", 5), float_at(file, V * D + L * D + 2 * D * D + 5));
    const size_t w1 = V * D + L * D + L * D * D + 2 * L * KV * D + L * D * D + L * D;
    EXPECT_EQ(view_float("blk.1.ffn_gate.weight", 9), float_at(file, w1 + F * D + 9));
    const size_t final_norm = w1 + 3 * L * F * D;
    EXPECT_EQ(view_float("output_norm.weight", 63), float_at(file, final_norm + 63));
}

TEST(Llama2cReader, SeparateClassifierWhenVocabIsNegative) {
    Bytes b = read_file(kBin);
    const int32_t neg = -512;
    std::memcpy(b.data() + 20, &neg, 4);
    for (size_t i = 0; i < 512 * 64; ++i) {
        const float v = float(i % 97) * 0.01f;
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + 4);
    }
    const std::string path = temp_path("wcls.bin");
    write_file(path, b);
    const ModelFile m = load_model(path);
    EXPECT_FALSE(m.hparams.tied_output);
    EXPECT_EQ(m.hparams.n_vocab, 512);
    ASSERT_TRUE(m.has("output.weight"));
    float v;
    std::memcpy(&v, m.weight("output.weight").data + 4 * 200, 4);
    EXPECT_EQ(v, float(200 % 97) * 0.01f);
    fs::remove(path);
}

TEST(Llama2cReader, TruncatedOrPaddedCheckpointsAreRejected) {
    const Bytes b = read_file(kBin);
    const std::string path = temp_path("trunc.bin");
    for (size_t n : {size_t(0), size_t(1), size_t(27), size_t(28), size_t(29), b.size() / 2, b.size() - 4, b.size() - 1}) {
        write_file(path, Bytes(b.begin(), b.begin() + std::ptrdiff_t(n)));
        EXPECT_THROW(load_model(path), Error) << n << " bytes";
    }
    Bytes longer = b;
    longer.push_back(0);
    write_file(path, longer);
    try {
        load_model(path);
        ADD_FAILURE() << "padded checkpoint accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("needs exactly"), std::string::npos) << e.what();
    }
    fs::remove(path);
}

TEST(Llama2cReader, AbsurdHeadersAreRejected) {
    const Bytes b = read_file(kBin);
    const std::string path = temp_path("absurd.bin");
    const int32_t big = std::numeric_limits<int32_t>::max(), small = std::numeric_limits<int32_t>::min();
    struct Case {
        int field;
        int32_t value;
    };
    const Case cases[] = {{0, 0},     {0, -64},   {0, big},   {0, 63},   {1, 0},     {1, big},   {2, 0},
                          {2, big},   {2, -5},    {3, 0},     {3, 7},    {3, 64},    {3, big},   {4, 0},
                          {4, 16},    {4, 3},     {5, 0},     {5, small}, {5, big},  {5, -big},  {6, 0},
                          {6, big},   {6, -1},    {1, 1 << 30}};
    for (const Case& c : cases) {
        Bytes h = b;
        std::memcpy(h.data() + 4 * c.field, &c.value, 4);
        write_file(path, h);
        EXPECT_THROW(load_model(path), Error) << "field " << c.field << " = " << c.value;
    }
    // All fields at their maximum: the size arithmetic must not overflow.
    Bytes h = b;
    for (int f = 0; f < 7; ++f) std::memcpy(h.data() + 4 * f, &big, 4);
    write_file(path, h);
    EXPECT_THROW(load_model(path), Error);
    fs::remove(path);
}

TEST(Llama2cTokenizer, ReadsTok512) {
    const Llama2cVocab v = read_llama2c_tokenizer(kTok, 512);
    EXPECT_EQ(v.max_token_length, 7);
    ASSERT_EQ(v.tokens.size(), 512u);
    ASSERT_EQ(v.scores.size(), 512u);
    EXPECT_EQ(v.tokens[0], "<unk>");
    EXPECT_EQ(v.tokens[1], "\n<s>\n");
    EXPECT_EQ(v.tokens[3], "<0x00>");
    EXPECT_EQ(v.tokens[258], "<0xFF>");
    EXPECT_EQ(v.tokens[259], " t");
    EXPECT_EQ(v.scores[260], -1.f);
    EXPECT_EQ(v.tokens[261], " a");
}

TEST(Llama2cTokenizer, ReadsLlama2Tokenizer) {
    const Llama2cVocab v = read_llama2c_tokenizer(kModels + "/tokenizer.bin", 32000);
    ASSERT_EQ(v.tokens.size(), 32000u);
    EXPECT_EQ(v.tokens[3], "<0x00>");
}

TEST(Llama2cTokenizer, RejectsWrongSizesAndDamage) {
    EXPECT_THROW(read_llama2c_tokenizer(kTok, 511), Error);  // bytes left over
    EXPECT_THROW(read_llama2c_tokenizer(kTok, 513), Error);  // runs out
    EXPECT_THROW(read_llama2c_tokenizer(kTok, 0), Error);
    EXPECT_THROW(read_llama2c_tokenizer(kTok, std::numeric_limits<int32_t>::max()), Error);
    const Bytes b = read_file(kTok);
    const std::string path = temp_path("tok.bin");
    for (size_t n : {size_t(0), size_t(3), size_t(4), size_t(11), b.size() / 2, b.size() - 1}) {
        write_file(path, Bytes(b.begin(), b.begin() + std::ptrdiff_t(n)));
        EXPECT_THROW(read_llama2c_tokenizer(path, 512), Error) << n << " bytes";
    }
    for (int32_t len : {-1, std::numeric_limits<int32_t>::max(), 100000}) {
        Bytes c = b;
        std::memcpy(c.data() + 8, &len, 4);  // length of token 0
        write_file(path, c);
        EXPECT_THROW(read_llama2c_tokenizer(path, 512), Error) << "length " << len;
    }
    fs::remove(path);
}

}  // namespace
}  // namespace hetero
