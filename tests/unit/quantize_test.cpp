// quantize_gguf_file (hetero quantize): the type llama-quantize's rules give
// each tensor in every file type, the values within each block type's
// rounding error of the source, the metadata, and the refusals.
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/quant_mix.hpp>
#include <hetero/model/quantize.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/sdk/quant.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

namespace hetero {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return test::temp_path("quantize_" + name).string(); }

// The tensors of a llama-shaped file: norms, attention, FFN per layer.
std::vector<QuantTensorDesc> llama_tensors(int layers, int64_t n_embd, int64_t n_ff, bool with_output) {
    std::vector<QuantTensorDesc> t;
    t.push_back({"token_embd.weight", {n_embd, 1000}, GGML_TYPE_ID_F16});
    for (int l = 0; l < layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        t.push_back({b + "attn_norm.weight", {n_embd}, GGML_TYPE_ID_F32});
        for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_output"}) t.push_back({b + m + ".weight", {n_embd, n_embd}, GGML_TYPE_ID_F16});
        t.push_back({b + "ffn_norm.weight", {n_embd}, GGML_TYPE_ID_F32});
        t.push_back({b + "ffn_gate.weight", {n_embd, n_ff}, GGML_TYPE_ID_F16});
        t.push_back({b + "ffn_up.weight", {n_embd, n_ff}, GGML_TYPE_ID_F16});
        t.push_back({b + "ffn_down.weight", {n_ff, n_embd}, GGML_TYPE_ID_F16});
    }
    t.push_back({"output_norm.weight", {n_embd}, GGML_TYPE_ID_F32});
    if (with_output) t.push_back({"output.weight", {n_embd, 1000}, GGML_TYPE_ID_F16});
    return t;
}

// name -> type name of the plan for file type `ft`.
std::map<std::string, std::string> plan(const std::string& ft, const std::vector<QuantTensorDesc>& t, int64_t layers, int64_t heads = 8,
                                        int64_t kv_heads = 8) {
    const auto* type = find_quant_file_type(ft);
    EXPECT_NE(type, nullptr) << ft;
    const std::vector<uint32_t> types = plan_quant_types(*type, {"llama", layers, heads, kv_heads}, t);
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < t.size(); ++i) out[t[i].name] = ggml_type_name(types[i]);
    return out;
}

std::string layers_with(const std::map<std::string, std::string>& p, const std::string& tensor, const std::string& type, int layers) {
    std::string s;
    for (int l = 0; l < layers; ++l)
        if (p.at("blk." + std::to_string(l) + "." + tensor + ".weight") == type) s += std::to_string(l) + " ";
    return s;
}

TEST(QuantizePlan, Q4KMGivesAttnVAndFfnDownSixBitsInTheChosenLayers) {
    const auto p = plan("Q4_K_M", llama_tensors(16, 256, 512, true), 16);
    // use_more_bits(i, 16): the first and last two layers and every third between.
    EXPECT_EQ(layers_with(p, "attn_v", "q6_K", 16), "0 1 4 7 10 13 14 15 ");
    EXPECT_EQ(layers_with(p, "ffn_down", "q6_K", 16), "0 1 4 7 10 13 14 15 ");
    EXPECT_EQ(layers_with(p, "attn_v", "q4_K", 16), "2 3 5 6 8 9 11 12 ");
    EXPECT_EQ(p.at("output.weight"), "q6_K");
    EXPECT_EQ(p.at("token_embd.weight"), "q4_K");  // not tied: the base type
    EXPECT_EQ(p.at("blk.3.attn_q.weight"), "q4_K");
    EXPECT_EQ(p.at("blk.3.ffn_gate.weight"), "q4_K");
    EXPECT_EQ(p.at("blk.3.attn_norm.weight"), "f32");  // norms keep their type
}

TEST(QuantizePlan, TiedEmbeddingTakesTheClassifierType) {
    const auto p = plan("Q4_K_M", llama_tensors(4, 256, 512, false), 4);
    EXPECT_EQ(p.at("token_embd.weight"), "q6_K");
    const auto q8 = plan("Q8_0", llama_tensors(4, 256, 512, false), 4);
    EXPECT_EQ(q8.at("token_embd.weight"), "q8_0");  // Q8_0 files keep Q8_0 there
    const auto q4 = plan("Q4_0", llama_tensors(4, 256, 512, true), 4);
    EXPECT_EQ(q4.at("output.weight"), "q6_K");  // llama-quantize's Q4_0 files carry a Q6_K classifier
    EXPECT_EQ(q4.at("blk.0.attn_v.weight"), "q4_0");
}

TEST(QuantizePlan, SmallMixesAndTheLowTypes) {
    const auto s = plan("Q4_K_S", llama_tensors(16, 256, 512, true), 16);
    EXPECT_EQ(layers_with(s, "attn_v", "q5_K", 16), "0 1 2 3 ");
    EXPECT_EQ(layers_with(s, "ffn_down", "q5_K", 16), "0 1 ");
    const auto m3 = plan("Q3_K_M", llama_tensors(16, 256, 512, true), 16);
    EXPECT_EQ(layers_with(m3, "attn_v", "q5_K", 16), "0 1 ");
    EXPECT_EQ(layers_with(m3, "attn_v", "q4_K", 16), "2 3 4 5 6 7 8 9 10 11 12 13 14 15 ");
    EXPECT_EQ(layers_with(m3, "ffn_down", "q5_K", 16), "0 ");
    EXPECT_EQ(m3.at("blk.5.ffn_down.weight"), "q4_K");
    EXPECT_EQ(m3.at("blk.5.attn_output.weight"), "q4_K");
    EXPECT_EQ(m3.at("blk.5.attn_q.weight"), "q3_K");
    const auto l3 = plan("Q3_K_L", llama_tensors(4, 256, 512, true), 4);
    EXPECT_EQ(l3.at("blk.2.attn_output.weight"), "q5_K");
    // Q2_K: attn_v in Q3_K, or Q4_K from 4 query heads per kv head.
    EXPECT_EQ(plan("Q2_K", llama_tensors(4, 256, 512, true), 4).at("blk.1.attn_v.weight"), "q3_K");
    const auto q2 = plan("Q2_K", llama_tensors(4, 256, 512, true), 4, 8, 2);
    EXPECT_EQ(q2.at("blk.1.attn_v.weight"), "q4_K");
    EXPECT_EQ(q2.at("blk.1.ffn_down.weight"), "q3_K");
    EXPECT_EQ(q2.at("blk.1.attn_q.weight"), "q2_K");
    const auto m5 = plan("Q5_K_M", llama_tensors(8, 256, 512, true), 8);
    EXPECT_EQ(layers_with(m5, "ffn_down", "q6_K", 8), "0 3 6 7 ");
    EXPECT_EQ(plan("Q5_K_S", llama_tensors(8, 256, 512, true), 8).at("blk.0.ffn_down.weight"), "q5_K");
    const auto nl = plan("IQ4_NL", llama_tensors(8, 256, 512, true), 8, 8, 4);
    EXPECT_EQ(nl.at("blk.0.ffn_down.weight"), "q5_K");  // the first eighth
    EXPECT_EQ(nl.at("blk.1.ffn_down.weight"), "iq4_nl");
    EXPECT_EQ(nl.at("blk.1.attn_v.weight"), "iq4_nl");
    // 4 query heads per kv head: attn_v in q5_K.
    EXPECT_EQ(plan("IQ4_NL", llama_tensors(8, 256, 512, true), 8, 8, 2).at("blk.1.attn_v.weight"), "q5_K");
}

TEST(QuantizePlan, RowsThatCannotHoldTheBlocksFallBack) {
    // 288 = 9 x 32, not a multiple of 256; 100 is not a multiple of 32.
    auto t = llama_tensors(2, 288, 100, true);
    const auto p = plan("Q4_K_M", t, 2);
    EXPECT_EQ(p.at("blk.0.attn_q.weight"), "q5_0");
    EXPECT_EQ(p.at("blk.0.attn_v.weight"), "q5_0");     // q4_K falls back to q5_0
    EXPECT_EQ(p.at("blk.1.attn_v.weight"), "q8_0");     // the last layer's q6_K to q8_0
    EXPECT_EQ(p.at("blk.0.ffn_down.weight"), "f16");    // rows of 100
    EXPECT_EQ(p.at("output.weight"), "q8_0");
    EXPECT_EQ(plan("Q2_K", t, 2).at("blk.0.attn_q.weight"), "q4_0");
    EXPECT_EQ(plan("Q5_K_S", t, 2).at("blk.1.attn_q.weight"), "q5_1");
    EXPECT_EQ(plan("Q4_0", t, 2).at("blk.0.ffn_down.weight"), "f16");
    EXPECT_EQ(plan("F16", t, 2).at("blk.0.ffn_down.weight"), "f16");
    EXPECT_EQ(plan("BF16", t, 2).at("output.weight"), "bf16");
}

TEST(QuantizePlan, TypeNamesAreLlamaQuantizes) {
    EXPECT_NE(find_quant_file_type("q4_k_m"), nullptr);
    EXPECT_EQ(find_quant_file_type("Q4_K")->ftype, 15u);  // alias of Q4_K_M
    EXPECT_EQ(find_quant_file_type("Q6_K")->ftype, 18u);
    EXPECT_EQ(find_quant_file_type("IQ4_NL")->ftype, 25u);
    EXPECT_EQ(find_quant_file_type("BF16")->ftype, 32u);
    EXPECT_EQ(find_quant_file_type("IQ2_XXS"), nullptr);  // hetero reads no IQ2 type
    EXPECT_EQ(find_quant_file_type("Q2_K_S"), nullptr);   // needs an importance matrix
}

// A small random-weight f32 model whose rows hold K-quant super-blocks.
class QuantizeFile : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        src_ = new std::string(temp_path("src-f32.gguf"));
        write_random_model(*src_, {256, 512, 4, 4, 2, 512, 128}, HETERO_DTYPE_F32, 7, "qwen2");
    }
    static void TearDownTestSuite() {
        fs::remove(*src_);
        delete src_;
    }
    static std::string* src_;
};
std::string* QuantizeFile::src_ = nullptr;

std::vector<float> to_f32(const GgufTensorInfo& t) {
    const uint32_t dtype = *hetero_dtype_from_ggml(t.ggml_type);
    const int64_t cols = t.ne[0];
    const uint64_t row = sdk::row_bytes(dtype, cols);
    std::vector<float> out(size_t(t.bytes / row * uint64_t(cols)));
    for (uint64_t r = 0; r * row < t.bytes; ++r) sdk::row_to_f32(dtype, t.data + r * row, out.data() + r * uint64_t(cols), cols);
    return out;
}

// RMS of the rounding error relative to the RMS of the values.
double relative_rms_error(const std::vector<float>& ref, const std::vector<float>& got) {
    double e = 0, s = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        e += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
        s += double(ref[i]) * ref[i];
    }
    return std::sqrt(e / s);
}

// The relative RMS error rounding uniformly spread values costs each type:
// half a step over the step's share of the range (1 / (2 (levels - 1)) for a
// min/max grid), with a margin for the scales' own rounding to 4 to 8 bits.
double expected_error(const std::string& type) {
    static const std::map<std::string, double> e = {
        {"f32", 0.0},      {"f16", 0.0005},   {"bf16", 0.004},  {"q8_0", 0.0045}, {"q6_K", 0.019}, {"q5_0", 0.036},
        {"q5_1", 0.037},   {"q5_K", 0.040},   {"q4_0", 0.072},  {"q4_1", 0.077},  {"q4_K", 0.080}, {"iq4_nl", 0.090},
        {"q3_K", 0.160},   {"q2_K", 0.420},   {"e0m4", 0.072},  // Q4_1's grid, the least-squares fit of a few
    };
    return e.at(type);
}

TEST_F(QuantizeFile, EveryTypeLoadsAndStaysWithinItsRoundingError) {
    const GgufFile src = GgufFile::open(*src_);
    for (const std::string& type : quantize_type_names()) {
        SCOPED_TRACE(type);
        const std::string out = temp_path("q.gguf");
        const std::vector<QuantizedTensor> written = quantize_gguf_file(*src_, out, {type, 2, false});
        const ModelFile m = load_model(out);  // the loader's shape and type checks
        EXPECT_EQ(m.hparams.n_layer, 4);
        const GgufFile q = GgufFile::open(out);
        ASSERT_EQ(q.tensors().size(), src.tensors().size());
        ASSERT_EQ(written.size(), src.tensors().size());
        std::map<uint32_t, int> seen;
        for (size_t i = 0; i < src.tensors().size(); ++i) {
            const GgufTensorInfo& a = src.tensors()[i];
            const GgufTensorInfo& b = q.tensors()[i];
            ASSERT_EQ(a.name, b.name);
            EXPECT_EQ(a.ne, b.ne) << a.name;
            EXPECT_EQ(written[i].ggml_type, b.ggml_type) << a.name;
            ++seen[b.ggml_type];
            if (a.ne.size() == 1) {
                EXPECT_EQ(b.ggml_type, GGML_TYPE_ID_F32) << a.name << ": norms and biases stay f32";
                continue;
            }
            const double err = relative_rms_error(to_f32(a), to_f32(b));
            EXPECT_LE(err, expected_error(ggml_type_name(b.ggml_type))) << a.name << " as " << ggml_type_name(b.ggml_type);
            EXPECT_GE(err, expected_error(ggml_type_name(b.ggml_type)) / 4) << a.name << ": a rounding error far below the type's";
        }
        EXPECT_EQ(q.get_uint("general.file_type"), find_quant_file_type(type)->ftype);
        EXPECT_EQ(q.get_uint("general.quantization_version"), 2u);
        EXPECT_EQ(q.get_string("general.architecture"), "qwen2");  // the rest of the metadata is copied
        EXPECT_EQ(q.get_string_array("tokenizer.ggml.tokens"), src.get_string_array("tokenizer.ggml.tokens"));
        fs::remove(out);
    }
}

// The K-quants' and IQ4_NL's scales are searched for the least error: below
// what each sub-block's extremes give (the SDK's encoders), by 3 % or more on
// these uniformly spread weights.
TEST_F(QuantizeFile, SearchedScalesBeatTheExtremes) {
    const GgufFile src = GgufFile::open(*src_);
    for (const char* type : {"Q2_K", "Q3_K_S", "Q4_K_S", "Q5_K_S", "Q6_K", "IQ4_NL"}) {
        SCOPED_TRACE(type);
        const std::string out = temp_path("s.gguf");
        quantize_gguf_file(*src_, out, {type, 2, false});
        const GgufFile q = GgufFile::open(out);
        int compared = 0;
        for (size_t i = 0; i < src.tensors().size(); ++i) {
            const GgufTensorInfo& a = src.tensors()[i];
            const GgufTensorInfo& b = q.tensors()[i];
            const uint32_t dtype = *hetero_dtype_from_ggml(b.ggml_type);
            if (a.ne.size() != 2 || !(sdk::is_kquant_dtype(dtype) || dtype == HETERO_DTYPE_IQ4_NL)) continue;
            const std::vector<float> ref = to_f32(a);
            const int64_t cols = a.ne[0];
            std::vector<uint8_t> row(sdk::row_bytes(dtype, cols));
            std::vector<float> extremes(ref.size());
            for (size_t r = 0; r < ref.size() / size_t(cols); ++r) {
                sdk::row_from_f32(dtype, ref.data() + r * size_t(cols), row.data(), cols);
                sdk::row_to_f32(dtype, row.data(), extremes.data() + r * size_t(cols), cols);
            }
            const double searched = relative_rms_error(ref, to_f32(b)), plain = relative_rms_error(ref, extremes);
            EXPECT_LE(searched, 0.97 * plain) << a.name << " as " << ggml_type_name(b.ggml_type);
            ++compared;
        }
        EXPECT_GT(compared, 0);
        fs::remove(out);
    }
}

TEST_F(QuantizeFile, ResultDoesNotDependOnTheThreadCount) {
    const std::string a = temp_path("t1.gguf"), b = temp_path("t3.gguf");
    quantize_gguf_file(*src_, a, {"Q4_K_M", 1, false});
    quantize_gguf_file(*src_, b, {"Q4_K_M", 3, false});
    const GgufFile fa = GgufFile::open(a), fb = GgufFile::open(b);
    ASSERT_EQ(fa.mapped_size(), fb.mapped_size());
    EXPECT_EQ(std::memcmp(fa.mapped_data(), fb.mapped_data(), size_t(fa.mapped_size())), 0);
    fs::remove(a);
    fs::remove(b);
}

TEST_F(QuantizeFile, RequantizingNeedsPermissionAndBadRequestsAreRefused) {
    const std::string q8 = temp_path("q8.gguf"), out = temp_path("out.gguf");
    quantize_gguf_file(*src_, q8, {"Q8_0", 0, false});
    try {
        quantize_gguf_file(q8, out, {"Q4_K_M", 0, false});
        FAIL() << "requantized without permission";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("already quantized"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(q8), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--allow-requantize"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out));
    // The same type again is a copy, no re-encoding: allowed.
    quantize_gguf_file(q8, out, {"Q8_0", 0, false});
    // With permission: through f32, within the new type's error of the Q8_0 values.
    quantize_gguf_file(q8, out, {"Q4_K_M", 0, true});
    EXPECT_NO_THROW(load_model(out));
    try {
        quantize_gguf_file(*src_, out, {"Q4_K_X", 0, false});
        FAIL() << "accepted an unknown type";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Q4_K_M"), std::string::npos) << "lists the known types: " << e.what();
    }
    EXPECT_THROW(quantize_gguf_file(*src_, *src_, {"Q8_0", 0, false}), Error);  // over its own input
    EXPECT_THROW(quantize_gguf_file(out + ".missing", out, {"Q8_0", 0, false}), Error);
    fs::remove(q8);
    fs::remove(out);
}

}  // namespace
}  // namespace hetero
