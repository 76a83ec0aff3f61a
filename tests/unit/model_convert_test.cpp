// convert_llama2c_to_gguf and quantize_gguf: the output loads, holds the
// checkpoint's weights (exactly for f32, within quantization error
// otherwise) and the tokenizer metadata llama.cpp writes.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/convert.hpp>
#include <hetero/model/model.hpp>
#include <hetero/sdk/quant.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

namespace hetero {
namespace {

namespace fs = std::filesystem;

const std::string kModels = ::hetero::test::models_dir();
const std::string kBin = kModels + "/stories260K.bin";
const std::string kTok = kModels + "/tok512.bin";

std::string temp_path(const std::string& name) { return test::temp_path("convert_" + name).string(); }

std::vector<float> to_f32(const WeightView& w) {
    const int64_t cols = w.shape.back();
    const uint64_t row = sdk::row_bytes(w.dtype, cols);
    std::vector<float> out;
    for (uint64_t off = 0; off < w.bytes; off += row) {
        std::vector<float> r(size_t(cols), 0.f);
        sdk::row_to_f32(w.dtype, w.data + off, r.data(), cols);
        out.insert(out.end(), r.begin(), r.end());
    }
    return out;
}

// Largest |a - b| relative to the largest |a|.
double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
    double err = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        err = std::max(err, double(std::fabs(a[i] - b[i])));
        scale = std::max(scale, double(std::fabs(a[i])));
    }
    return scale > 0 ? err / scale : err;
}

TEST(ModelConvert, F32ConversionIsExactAndCarriesTheTokenizer) {
    const std::string out = temp_path("f32.gguf");
    convert_llama2c_to_gguf(kBin, kTok, out, HETERO_DTYPE_F32);
    const ModelFile c = load_model(out);
    const ModelFile b = load_model(kBin);
    EXPECT_EQ(c.hparams.n_ctx_train, 512);
    EXPECT_TRUE(c.hparams.tied_output);
    EXPECT_EQ(c.hparams.n_layer, 5);
    EXPECT_EQ(c.hparams.n_head_kv, 4);
    EXPECT_EQ(c.hparams.rope_mode, HETERO_ROPE_ADJACENT);
    EXPECT_EQ(c.weights.size(), b.weights.size());
    for (const auto& [name, w] : b.weights) {
        const WeightView& v = c.weight(name);
        EXPECT_EQ(v.shape, w.shape) << name;
        EXPECT_EQ(v.dtype, HETERO_DTYPE_F32) << name;
        EXPECT_TRUE(v.bytes == w.bytes && std::memcmp(v.data, w.data, w.bytes) == 0) << name;
    }
    // Same vocabulary metadata as llama.cpp's own converter.
    const GgufFile ref = GgufFile::open(kModels + "/stories260K-llamacpp.gguf");
    const GgufFile& g = *c.gguf;
    EXPECT_EQ(g.get_string("tokenizer.ggml.model"), "llama");
    EXPECT_EQ(g.get_string_array("tokenizer.ggml.tokens"), ref.get_string_array("tokenizer.ggml.tokens"));
    EXPECT_EQ(g.get_int_array("tokenizer.ggml.token_type"), ref.get_int_array("tokenizer.ggml.token_type"));
    EXPECT_EQ(g.get_float_array("tokenizer.ggml.scores"), ref.get_float_array("tokenizer.ggml.scores"));
    EXPECT_EQ(g.get_uint("tokenizer.ggml.bos_token_id"), 1u);
    EXPECT_EQ(g.get_uint("tokenizer.ggml.eos_token_id"), 2u);
    EXPECT_EQ(g.get_uint("tokenizer.ggml.unknown_token_id"), 0u);
    EXPECT_EQ(g.get_bool("tokenizer.ggml.add_bos_token"), true);
    EXPECT_EQ(g.get_string("general.architecture"), "llama");
    fs::remove(out);
}

TEST(ModelConvert, QuantizedConversions) {
    const ModelFile b = load_model(kBin);
    struct Case {
        uint32_t dtype;
        double tolerance;  // relative to the tensor's largest magnitude
    };
    for (const Case k : {Case{HETERO_DTYPE_F16, 1e-3}, Case{HETERO_DTYPE_Q8_0, 1e-2}, Case{HETERO_DTYPE_Q4_0, 0.15}}) {
        const std::string out = temp_path("q.gguf");
        convert_llama2c_to_gguf(kBin, kTok, out, k.dtype);
        const ModelFile c = load_model(out);
        for (const auto& [name, w] : b.weights) {
            const WeightView& v = c.weight(name);
            if (w.shape.size() == 1) {
                EXPECT_EQ(v.dtype, HETERO_DTYPE_F32) << name;
            } else if (name == "token_embd.weight" && k.dtype == HETERO_DTYPE_Q4_0) {
                EXPECT_EQ(v.dtype, HETERO_DTYPE_Q8_0) << name;
            } else if (name.find("ffn_down") != std::string::npos && k.dtype != HETERO_DTYPE_F16) {
                EXPECT_EQ(v.dtype, HETERO_DTYPE_F16) << name;  // 172 columns hold no whole blocks
            } else {
                EXPECT_EQ(v.dtype, k.dtype) << name;
            }
            EXPECT_LT(rel_error(to_f32(w), to_f32(v)), k.tolerance) << name << " as " << sdk::dtype_name(k.dtype);
        }
        fs::remove(out);
    }
}

TEST(ModelConvert, QuantizeGgufKeepsMetadata) {
    const std::string out = temp_path("requant.gguf");
    quantize_gguf(kModels + "/stories260K-llamacpp.gguf", out, HETERO_DTYPE_Q8_0);
    const ModelFile q = load_model(out);
    const ModelFile ref = load_model(kModels + "/stories260K-llamacpp.gguf");
    EXPECT_EQ(q.weight("output.weight").dtype, HETERO_DTYPE_Q8_0);
    EXPECT_EQ(q.weight("blk.3.attn_q.weight").dtype, HETERO_DTYPE_Q8_0);
    EXPECT_EQ(q.weight("blk.3.ffn_down.weight").dtype, HETERO_DTYPE_F16);
    EXPECT_EQ(q.weight("blk.3.ffn_norm.weight").dtype, HETERO_DTYPE_F32);
    EXPECT_LT(rel_error(to_f32(ref.weight("blk.3.attn_q.weight")), to_f32(q.weight("blk.3.attn_q.weight"))), 1e-2);
    EXPECT_EQ(q.gguf->get_string_array("tokenizer.ggml.tokens"), ref.gguf->get_string_array("tokenizer.ggml.tokens"));
    EXPECT_EQ(q.gguf->get_uint("general.file_type"), 7u);
    EXPECT_EQ(q.gguf->get_uint("llama.context_length"), 128u);
    fs::remove(out);
}

TEST(ModelConvert, RejectsBadRequests) {
    const std::string out = temp_path("bad.gguf");
    EXPECT_THROW(convert_llama2c_to_gguf(kBin, kTok, out, HETERO_DTYPE_I32), Error);
    EXPECT_THROW(convert_llama2c_to_gguf(kBin, kModels + "/tokenizer.bin", out, HETERO_DTYPE_F32), Error);  // 32000 tokens
    EXPECT_THROW(convert_llama2c_to_gguf(kTok, kTok, out, HETERO_DTYPE_F32), Error);
    EXPECT_THROW(quantize_gguf(kBin, out, HETERO_DTYPE_Q8_0), Error);  // not a GGUF
    fs::remove(out);
}

}  // namespace
}  // namespace hetero
