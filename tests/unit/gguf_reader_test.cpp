// GGUF reader and writer: real files from llama.cpp and writer -> reader
// round trips of every metadata type.
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace hetero {
namespace {

namespace fs = std::filesystem;

const std::string kModels = ::hetero::test::models_dir();

std::string temp_path(const std::string& name) { return test::temp_path("gguf_reader_" + name).string(); }

TEST(GgufReader, ReadsLlamaCppStories260K) {
    const GgufFile f = GgufFile::open(kModels + "/stories260K-llamacpp.gguf");
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_EQ(f.get_uint("llama.embedding_length"), 64u);
    EXPECT_EQ(f.get_uint("llama.block_count"), 5u);
    EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 4u);
    EXPECT_NEAR(*f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-12);
    EXPECT_EQ(f.type_of("tokenizer.ggml.tokens"), GgufType::ARRAY);
    const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), 512u);
    EXPECT_EQ(tokens[1], "<s>");
    EXPECT_EQ(tokens[3], "<0x00>");
    EXPECT_EQ(tokens[259], "\xE2\x96\x81t");  // SentencePiece word marker
    EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores").size(), 512u);
    const auto types = f.get_int_array("tokenizer.ggml.token_type");
    ASSERT_EQ(types.size(), 512u);
    EXPECT_EQ(types[0], 2);
    EXPECT_EQ(types[1], 3);
    EXPECT_EQ(types[3], 6);
    EXPECT_EQ(types[300], 1);
    // token_embd, output_norm, output + 9 tensors per layer for 5 layers.
    EXPECT_EQ(f.tensors().size(), 48u);
    const GgufTensorInfo* q = f.find_tensor("blk.0.attn_k.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->ggml_type, GGML_TYPE_ID_F32);
    EXPECT_EQ(q->ne, (std::vector<int64_t>{64, 32}));
    EXPECT_EQ(q->bytes, 64u * 32 * 4);
    EXPECT_EQ(q->data, f.mapped_data() + f.data_offset() + q->offset);
    EXPECT_EQ(f.find_tensor("no.such.tensor"), nullptr);
    EXPECT_FALSE(f.has("no.such.key"));
    EXPECT_EQ(f.get_uint("no.such.key"), std::nullopt);
    EXPECT_TRUE(f.get_string_array("no.such.key").empty());
    EXPECT_THROW(f.type_of("no.such.key"), Error);
}

TEST(GgufReader, VocabularyFilesWhenPresent) {
    int found = 0;
    for (const char* name : {"ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf"}) {
        const std::string path = ::hetero::test::vocab_dir() + "/" + name;
        if (!fs::exists(path)) continue;
        ++found;
        const GgufFile f = GgufFile::open(path);
        EXPECT_GT(f.get_string_array("tokenizer.ggml.tokens").size(), 1000u) << path;
        EXPECT_TRUE(f.get_string("tokenizer.ggml.model").has_value()) << path;
    }
    if (found == 0) GTEST_SKIP() << "no vocabulary GGUFs in " << ::hetero::test::vocab_dir() << ": run tests/fetch_vocab.sh";
}

TEST(GgufWriter, RoundTripsEveryMetadataType) {
    GgufWriter w;
    w.add_uint8("u8", 200);
    w.add_int8("i8", -100);
    w.add_uint16("u16", 60000);
    w.add_int16("i16", -30000);
    w.add_uint32("u32", 4000000000u);
    w.add_int32("i32", -2000000000);
    w.add_uint64("u64", std::numeric_limits<uint64_t>::max());
    w.add_int64("i64", std::numeric_limits<int64_t>::min());
    w.add_float32("f32", 1.5f);
    w.add_float64("f64", -2.25e100);
    w.add_bool("yes", true);
    w.add_bool("no", false);
    w.add_string("s", std::string("h\0llo", 5));
    w.add_string("empty", "");
    w.add_string_array("sa", {"a", "", "\xE2\x96\x81xyz"});
    w.add_float32_array("fa", {0.5f, -1.f, 3.25f});
    w.add_int32_array("ia", {1, -2, 2147483647});
    const uint16_t u16s[3] = {1, 2, 65535};
    w.add_array("u16a", GgufType::UINT16, 3, u16s);
    const uint64_t u64s[2] = {7, std::numeric_limits<uint64_t>::max()};
    w.add_array("u64a", GgufType::UINT64, 2, u64s);
    const double f64s[2] = {0.25, 1e300};
    w.add_array("f64a", GgufType::FLOAT64, 2, f64s);
    w.add_int32_array("empty_array", {});
    const std::vector<float> t0 = {1, 2, 3, 4, 5, 6};
    w.add_tensor("t0", GGML_TYPE_ID_F32, {3, 2}, t0.data(), t0.size() * 4);
    const std::vector<uint16_t> t1(64, 0x3c00);
    w.add_tensor("t1", GGML_TYPE_ID_F16, {64}, t1.data(), t1.size() * 2);
    const std::string path = temp_path("roundtrip.gguf");
    w.write(path);

    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.get_uint("u8"), 200u);
    EXPECT_EQ(f.get_int("i8"), -100);
    EXPECT_EQ(f.get_uint("u16"), 60000u);
    EXPECT_EQ(f.get_int("i16"), -30000);
    EXPECT_EQ(f.get_uint("u32"), 4000000000u);
    EXPECT_EQ(f.get_int("i32"), -2000000000);
    EXPECT_EQ(f.get_uint("u64"), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(f.get_int("i64"), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(f.get_float("f32"), 1.5);
    EXPECT_EQ(f.get_float("f64"), -2.25e100);
    EXPECT_EQ(f.get_float("u8"), 200.0);  // integers read as floats too
    EXPECT_EQ(f.get_bool("yes"), true);
    EXPECT_EQ(f.get_bool("no"), false);
    EXPECT_EQ(f.get_string("s"), std::string("h\0llo", 5));
    EXPECT_EQ(f.get_string("empty"), "");
    EXPECT_EQ(f.get_string_array("sa"), (std::vector<std::string>{"a", "", "\xE2\x96\x81xyz"}));
    EXPECT_EQ(f.get_float_array("fa"), (std::vector<float>{0.5f, -1.f, 3.25f}));
    EXPECT_EQ(f.get_int_array("ia"), (std::vector<int32_t>{1, -2, 2147483647}));
    EXPECT_EQ(f.get_int_array("u16a"), (std::vector<int32_t>{1, 2, 65535}));
    EXPECT_EQ(f.array_type_of("u64a"), GgufType::UINT64);
    EXPECT_EQ(f.get_float_array("f64a"), (std::vector<float>{0.25f, std::numeric_limits<float>::infinity()}));
    EXPECT_TRUE(f.get_int_array("empty_array").empty());
    EXPECT_EQ(f.array_size("sa"), 3u);

    const GgufType expected[] = {GgufType::UINT8, GgufType::INT8, GgufType::UINT16, GgufType::INT16, GgufType::UINT32,
                                 GgufType::INT32, GgufType::UINT64, GgufType::INT64, GgufType::FLOAT32, GgufType::FLOAT64,
                                 GgufType::BOOL, GgufType::BOOL, GgufType::STRING, GgufType::STRING};
    const auto keys = f.keys();
    ASSERT_EQ(keys.size(), 21u);
    for (size_t i = 0; i < std::size(expected); ++i) EXPECT_EQ(f.type_of(keys[i]), expected[i]) << keys[i];

    // Type mismatches are errors, never silent conversions.
    EXPECT_THROW(f.get_uint("i8"), Error);          // negative
    EXPECT_THROW(f.get_int("u64"), Error);          // does not fit int64
    EXPECT_THROW(f.get_string("u8"), Error);
    EXPECT_THROW(f.get_bool("u8"), Error);
    EXPECT_THROW(f.get_uint("f32"), Error);
    EXPECT_THROW(f.get_float("s"), Error);
    EXPECT_THROW(f.get_string_array("fa"), Error);
    EXPECT_THROW(f.get_float_array("sa"), Error);
    EXPECT_THROW(f.get_int_array("fa"), Error);
    EXPECT_THROW(f.get_int_array("u64a"), Error);  // element does not fit int32
    EXPECT_THROW(f.get_string_array("s"), Error);
    EXPECT_THROW(f.array_size("u8"), Error);

    ASSERT_EQ(f.tensors().size(), 2u);
    const GgufTensorInfo* a = f.find_tensor("t0");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->ne, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(a->offset % 32, 0u);
    EXPECT_EQ(std::memcmp(a->data, t0.data(), 24), 0);
    const GgufTensorInfo* b = f.find_tensor("t1");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->offset % 32, 0u);
    EXPECT_EQ(std::memcmp(b->data, t1.data(), 128), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data) % 32, 0u);

    // A GgufFile keeps its mapping when moved.
    GgufFile moved = GgufFile::open(path);
    const uint8_t* data = moved.find_tensor("t0")->data;
    GgufFile other = std::move(moved);
    EXPECT_EQ(other.find_tensor("t0")->data, data);
    EXPECT_EQ(std::memcmp(data, t0.data(), 24), 0);
    fs::remove(path);
}

TEST(GgufWriter, HonoursAlignmentAndCopiesRawValues) {
    GgufWriter w;
    w.set_alignment(64);
    w.add_string_array("names", {"x", "yy"});
    w.add_float64("pi", 3.25);
    const std::vector<float> t(5, 1.f);
    w.add_tensor("a", GGML_TYPE_ID_F32, {5}, t.data(), 20);
    w.add_tensor("b", GGML_TYPE_ID_F32, {5}, t.data(), 20);
    const std::string path = temp_path("align.gguf");
    w.write(path);
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.get_uint("general.alignment"), 64u);
    EXPECT_EQ(f.data_offset() % 64, 0u);
    EXPECT_EQ(f.find_tensor("b")->offset, 64u);

    GgufWriter copy;
    for (const auto& k : f.keys())
        if (k != "general.alignment") copy.add_raw(k, f.raw_value(k));
    const std::string path2 = temp_path("copy.gguf");
    copy.write(path2);
    const GgufFile g = GgufFile::open(path2);
    EXPECT_EQ(g.get_string_array("names"), (std::vector<std::string>{"x", "yy"}));
    EXPECT_EQ(g.get_float("pi"), 3.25);
    EXPECT_EQ(g.alignment(), 32u);

    EXPECT_THROW(w.set_alignment(48), Error);
    EXPECT_THROW(w.add_float64("pi", 1.0), Error);  // duplicate key
    EXPECT_THROW(w.add_tensor("c", GGML_TYPE_ID_Q8_0, {33}, t.data(), 34), Error);
    EXPECT_THROW(w.add_tensor("c", GGML_TYPE_ID_F32, {5}, t.data(), 16), Error);
    fs::remove(path);
    fs::remove(path2);
}

TEST(GgmlTypes, KnowsNamesAndLayouts) {
    EXPECT_EQ(ggml_type_name(12), "q4_K");
    EXPECT_EQ(ggml_type_name(14), "q6_K");
    EXPECT_EQ(ggml_type_name(30), "bf16");
    EXPECT_EQ(ggml_type_name(4), "unknown");
    EXPECT_EQ(ggml_type_traits(8)->block_bytes, 34u);
    EXPECT_EQ(ggml_type_traits(2)->block_bytes, 18u);
    EXPECT_EQ(ggml_type_traits(14)->block_elems, 256u);
    EXPECT_EQ(hetero_dtype_from_ggml(12), std::optional<uint32_t>(HETERO_DTYPE_Q4_K));
    EXPECT_EQ(hetero_dtype_from_ggml(13), std::optional<uint32_t>(HETERO_DTYPE_Q5_K));
    EXPECT_EQ(hetero_dtype_from_ggml(14), std::optional<uint32_t>(HETERO_DTYPE_Q6_K));
    EXPECT_EQ(ggml_type_from_hetero(HETERO_DTYPE_Q6_K), std::optional<uint32_t>(14u));
    EXPECT_EQ(hetero_dtype_from_ggml(11), std::optional<uint32_t>(HETERO_DTYPE_Q3_K));  // since ABI 1.2
    EXPECT_EQ(hetero_dtype_from_ggml(3), std::optional<uint32_t>(HETERO_DTYPE_Q4_1));
    EXPECT_FALSE(hetero_dtype_from_ggml(21).has_value());  // iq3_s
    EXPECT_FALSE(hetero_dtype_from_ggml(9).has_value());   // q8_1
    EXPECT_FALSE(ggml_type_traits(999).has_value());
    EXPECT_FALSE(ggml_type_traits(1001).has_value());
    EXPECT_EQ(hetero_dtype_from_ggml(1000), std::optional<uint32_t>(HETERO_DTYPE_E0M4));  // hetero's own (docs/models.md)
}

}  // namespace
}  // namespace hetero
