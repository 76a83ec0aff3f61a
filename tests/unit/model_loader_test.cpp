// load_model on GGUF files: llama.cpp's own conversion of stories260K must
// hold exactly the .bin's weights; synthetic llama/qwen2 files exercise the
// hyper-parameter, shape, dtype and architecture checks.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/model.hpp>

#include <gtest/gtest.h>

#include "error_message.hpp"
#include "test_data.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <tuple>

namespace hetero {
namespace {

namespace fs = std::filesystem;

const std::string kModels = ::hetero::test::models_dir();

std::string temp_path(const std::string& name) { return test::temp_path("model_loader_" + name).string(); }

bool same_bytes(const WeightView& a, const WeightView& b) {
    return a.bytes == b.bytes && std::memcmp(a.data, b.data, a.bytes) == 0;
}

TEST(ModelLoader, LlamaCppConversionMatchesCheckpoint) {
    const ModelFile g = load_model(kModels + "/stories260K-llamacpp.gguf");
    const ModelFile b = load_model(kModels + "/stories260K.bin");
    EXPECT_EQ(g.format, ModelFormat::GGUF);
    ASSERT_TRUE(g.gguf.has_value());
    const LlamaHParams& hg = g.hparams;
    const LlamaHParams& hb = b.hparams;
    EXPECT_EQ(hg.arch, "llama");
    EXPECT_EQ(hg.n_vocab, hb.n_vocab);
    EXPECT_EQ(hg.n_embd, hb.n_embd);
    EXPECT_EQ(hg.n_layer, hb.n_layer);
    EXPECT_EQ(hg.n_head, hb.n_head);
    EXPECT_EQ(hg.n_head_kv, hb.n_head_kv);
    EXPECT_EQ(hg.n_ff, hb.n_ff);
    EXPECT_EQ(hg.head_dim, hb.head_dim);
    EXPECT_EQ(hg.rope_dims, hb.rope_dims);
    EXPECT_EQ(hg.rope_freq_base, hb.rope_freq_base);
    EXPECT_EQ(hg.norm_eps, hb.norm_eps);
    EXPECT_EQ(hg.rope_mode, HETERO_ROPE_ADJACENT);
    EXPECT_EQ(hg.n_ctx_train, 128);  // llama.cpp's converter writes its own default
    // llama.cpp writes the tied classifier out as a copy of the embedding.
    EXPECT_FALSE(hg.tied_output);
    ASSERT_TRUE(g.has("output.weight"));
    EXPECT_TRUE(same_bytes(g.weight("output.weight"), b.weight("token_embd.weight")));
    // Every other tensor is bit-identical to the checkpoint: in particular Q
    // and K are not permuted (llama2.c already rotates adjacent pairs).
    for (const auto& [name, w] : b.weights) {
        ASSERT_TRUE(g.has(name)) << name;
        const WeightView& v = g.weight(name);
        EXPECT_EQ(v.shape, w.shape) << name;
        EXPECT_EQ(v.dtype, HETERO_DTYPE_F32) << name;
        EXPECT_TRUE(same_bytes(v, w)) << name;
    }
    EXPECT_EQ(g.weights.size(), b.weights.size() + 1);
}

// A small model written with the GGUF writer; `edit` may change anything first.
struct TinySpec {
    std::string arch = "llama";
    int64_t D = 64, F = 96, L = 2, H = 4, Hkv = 2, V = 40;
    bool biases = false;
    uint32_t matrix_type = GGML_TYPE_ID_F32;
    std::function<void(GgufWriter&)> extra_meta;
    std::function<bool(const std::string&, std::vector<int64_t>&, uint32_t&)> edit_tensor;  // false drops it
    std::function<void(const std::string&, std::vector<uint8_t>&)> edit_data;                 // a tensor's bytes
    float freq_base = 1e6f, eps = 1e-6f;
    int64_t extra_layers = 0;  // tensors of this many layers beyond block_count
};

std::string write_tiny(const TinySpec& s, const std::string& file) {
    GgufWriter w;
    const std::string a = s.arch + ".";
    w.add_string("general.architecture", s.arch);
    w.add_uint32(a + "embedding_length", uint32_t(s.D));
    w.add_uint32(a + "block_count", uint32_t(s.L));
    w.add_uint32(a + "attention.head_count", uint32_t(s.H));
    w.add_uint32(a + "attention.head_count_kv", uint32_t(s.Hkv));
    w.add_uint32(a + "feed_forward_length", uint32_t(s.F));
    w.add_uint32(a + "context_length", 256);
    w.add_float32(a + "rope.freq_base", s.freq_base);
    w.add_float32(a + "attention.layer_norm_rms_epsilon", s.eps);
    if (s.extra_meta) s.extra_meta(w);
    const int64_t hd = s.D / s.H;
    auto tensor = [&](const std::string& name, std::vector<int64_t> ne, uint32_t type) {
        if (s.edit_tensor && !s.edit_tensor(name, ne, type)) return;
        const auto t = *ggml_type_traits(type);
        uint64_t n = 1;
        for (int64_t d : ne) n *= uint64_t(d);
        std::vector<uint8_t> data(n / t.block_elems * t.block_bytes);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7);
        if (type == GGML_TYPE_ID_F32)  // small finite floats
            for (size_t i = 0; i < data.size() / 4; ++i) {
                const float v = float(i % 13) * 0.01f;
                std::memcpy(data.data() + 4 * i, &v, 4);
            }
        // Finite values for every type (the loader refuses NaN/Inf): f16/bf16
        // halves and the f16 scale of each quantized block.
        if (type == GGML_TYPE_ID_F16 || type == GGML_TYPE_ID_BF16)
            for (size_t i = 0; i + 1 < data.size(); i += 2) {
                const uint16_t h = type == GGML_TYPE_ID_F16 ? uint16_t(0x2e66 + i % 64) : uint16_t(0x3dcc + i % 64);
                std::memcpy(data.data() + i, &h, 2);
            }
        if (type == GGML_TYPE_ID_Q8_0 || type == GGML_TYPE_ID_Q4_0)
            for (size_t b = 0; b < data.size(); b += t.block_bytes) {
                const uint16_t h = 0x2e66;  // 0.1
                std::memcpy(data.data() + b, &h, 2);
            }
        if (s.edit_data) s.edit_data(name, data);
        w.add_tensor(name, type, ne, data.data(), data.size());
    };
    const uint32_t mt = s.matrix_type;
    tensor("token_embd.weight", {s.D, s.V}, mt);
    tensor("output_norm.weight", {s.D}, GGML_TYPE_ID_F32);
    for (int64_t l = 0; l < s.L + s.extra_layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        tensor(b + "attn_norm.weight", {s.D}, GGML_TYPE_ID_F32);
        tensor(b + "attn_q.weight", {s.D, s.H * hd}, mt);
        tensor(b + "attn_k.weight", {s.D, s.Hkv * hd}, mt);
        tensor(b + "attn_v.weight", {s.D, s.Hkv * hd}, mt);
        tensor(b + "attn_output.weight", {s.H * hd, s.D}, mt);
        tensor(b + "ffn_norm.weight", {s.D}, GGML_TYPE_ID_F32);
        tensor(b + "ffn_gate.weight", {s.D, s.F}, mt);
        tensor(b + "ffn_up.weight", {s.D, s.F}, mt);
        tensor(b + "ffn_down.weight", {s.F, s.D}, s.F % 32 == 0 ? mt : GGML_TYPE_ID_F32);
        if (s.biases) {
            tensor(b + "attn_q.bias", {s.H * hd}, GGML_TYPE_ID_F32);
            tensor(b + "attn_k.bias", {s.Hkv * hd}, GGML_TYPE_ID_F32);
            tensor(b + "attn_v.bias", {s.Hkv * hd}, GGML_TYPE_ID_F32);
        }
    }
    const std::string path = temp_path(file);
    w.write(path);
    return path;
}

TEST(ModelLoader, SyntheticLlamaLoads) {
    TinySpec s;
    const std::string path = write_tiny(s, "llama.gguf");
    const ModelFile m = load_model(path);
    EXPECT_EQ(m.hparams.n_vocab, 40);
    EXPECT_EQ(m.hparams.n_ctx_train, 256);
    EXPECT_EQ(m.hparams.rope_freq_base, 1e6f);
    EXPECT_EQ(m.hparams.norm_eps, 1e-6f);
    EXPECT_EQ(m.hparams.head_dim, 16);
    EXPECT_TRUE(m.hparams.tied_output);
    EXPECT_EQ(m.weight("blk.1.attn_k.weight").shape, (std::vector<int64_t>{32, 64}));
    EXPECT_EQ(m.weight("blk.1.ffn_down.weight").shape, (std::vector<int64_t>{64, 96}));
    fs::remove(path);
}

TEST(ModelLoader, QuantizedAndHalfWeightsKeepTheirDtype) {
    for (auto [ggml, hetero] : {std::pair{GGML_TYPE_ID_Q8_0, HETERO_DTYPE_Q8_0}, {GGML_TYPE_ID_Q4_0, HETERO_DTYPE_Q4_0},
                                {GGML_TYPE_ID_F16, HETERO_DTYPE_F16}, {GGML_TYPE_ID_BF16, HETERO_DTYPE_BF16}}) {
        TinySpec s;
        s.matrix_type = ggml;
        const std::string path = write_tiny(s, "typed.gguf");
        const ModelFile m = load_model(path);
        EXPECT_EQ(m.weight("blk.0.attn_q.weight").dtype, uint32_t(hetero)) << ggml;
        EXPECT_EQ(m.weight("token_embd.weight").dtype, uint32_t(hetero)) << ggml;
        EXPECT_EQ(m.weight("blk.0.attn_norm.weight").dtype, uint32_t(HETERO_DTYPE_F32));
        fs::remove(path);
    }
}

TEST(ModelLoader, Qwen2NeedsBiasesAndRotatesHalves) {
    TinySpec s;
    s.arch = "qwen2";
    s.biases = true;
    const std::string path = write_tiny(s, "qwen2.gguf");
    const ModelFile m = load_model(path);
    EXPECT_EQ(m.hparams.arch, "qwen2");
    EXPECT_EQ(m.hparams.rope_mode, HETERO_ROPE_HALVES);
    EXPECT_EQ(m.weight("blk.1.attn_k.bias").shape, (std::vector<int64_t>{32}));
    fs::remove(path);

    s.biases = false;
    const std::string msg = test::model_load_error_removing(write_tiny(s, "qwen2-nobias.gguf"));
    EXPECT_NE(msg.find("attn_q.bias"), std::string::npos) << msg;
}

TEST(ModelLoader, UnsupportedArchitecture) {
    TinySpec s;
    s.arch = "gpt2";
    const std::string msg = test::model_load_error_removing(write_tiny(s, "gpt2.gguf"));
    EXPECT_NE(msg.find("unsupported architecture 'gpt2' (supported: llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3)"), std::string::npos) << msg;
}

TEST(ModelLoader, UnsupportedWeightTypeIsNamed) {
    TinySpec s;
    s.D = 256;
    s.F = 512;
    s.H = 8;
    s.edit_tensor = [](const std::string& name, std::vector<int64_t>&, uint32_t& type) {
        if (name == "blk.1.ffn_up.weight") type = 21;  // iq3_s (110 bytes per 256, as q3_K)
        return true;
    };
    const std::string msg = test::model_load_error_removing(write_tiny(s, "iq3s.gguf"));
    EXPECT_NE(msg.find("unsupported tensor type iq3_s (21) for tensor 'blk.1.ffn_up.weight'"), std::string::npos) << msg;
}

TEST(ModelLoader, ShapeAndPresenceAreChecked) {
    TinySpec s;
    s.edit_tensor = [](const std::string& name, std::vector<int64_t>& ne, uint32_t&) {
        if (name == "blk.1.attn_v.weight") ne = {64, 48};
        return true;
    };
    std::string msg = test::model_load_error_removing(write_tiny(s, "shape.gguf"));
    EXPECT_NE(msg.find("'blk.1.attn_v.weight' has shape [48, 64] but the hyper-parameters need [32, 64]"),
              std::string::npos)
        << msg;

    s.edit_tensor = [](const std::string& name, std::vector<int64_t>&, uint32_t&) { return name != "blk.0.ffn_gate.weight"; };
    msg = test::model_load_error_removing(write_tiny(s, "missing.gguf"));
    EXPECT_NE(msg.find("'blk.0.ffn_gate.weight'"), std::string::npos) << msg;

    s.edit_tensor = [](const std::string& name, std::vector<int64_t>&, uint32_t& type) {
        if (name == "output_norm.weight") type = GGML_TYPE_ID_F16;
        return true;
    };
    msg = test::model_load_error_removing(write_tiny(s, "f16norm.gguf"));
    EXPECT_NE(msg.find("norms and biases must be f32"), std::string::npos) << msg;

    s.edit_tensor = [](const std::string& name, std::vector<int64_t>& ne, uint32_t&) {
        if (name == "output.weight") ne = {64, 41};
        return true;
    };
    s.edit_tensor = nullptr;
    s.extra_meta = [](GgufWriter& w) {
        w.add_string_array("tokenizer.ggml.tokens", std::vector<std::string>(39, "x"));
    };
    msg = test::model_load_error_removing(write_tiny(s, "vocab.gguf"));
    EXPECT_NE(msg.find("tokenizer.ggml.tokens has 39 entries"), std::string::npos) << msg;
}

TEST(ModelLoader, HyperParameterChecks) {
    auto with = [](std::function<void(GgufWriter&)> meta, TinySpec s = {}) {
        s.extra_meta = std::move(meta);
        return test::model_load_error_removing(write_tiny(s, "hp.gguf"));
    };
    TinySpec bad_heads;
    bad_heads.Hkv = 3;
    EXPECT_NE(with(nullptr, bad_heads).find("head_count_kv"), std::string::npos);
    EXPECT_NE(with([](GgufWriter& w) { w.add_uint32("llama.rope.dimension_count", 17); }).find("rope.dimension_count"),
              std::string::npos);
    EXPECT_NE(with([](GgufWriter& w) { w.add_string("llama.rope.scaling.type", "yarn"); }).find("yarn"), std::string::npos);
    // A missing required key.
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    const std::string path = temp_path("nokeys.gguf");
    w.write(path);
    EXPECT_NE(test::model_load_error_removing(path).find("llama.embedding_length"), std::string::npos);
    GgufWriter w2;
    w2.add_uint32("x", 1);
    w2.write(path);
    EXPECT_NE(test::model_load_error_removing(path).find("general.architecture"), std::string::npos);
    // A huge dimension is refused before any shape arithmetic.
    EXPECT_NE(with([](GgufWriter& g) { g.add_uint64("llama.vocab_size", 1); }).find("vocab_size"), std::string::npos);
    TinySpec huge;
    huge.extra_meta = nullptr;
    GgufWriter w3;
    w3.add_string("general.architecture", "llama");
    w3.add_uint64("llama.embedding_length", uint64_t(1) << 62);
    w3.write(path);
    EXPECT_NE(test::model_load_error_removing(path).find("out of range"), std::string::npos);
}

// Values checked, not trusted: NaN/Inf in norms, biases, the embedding or a
// sampled matrix block, absurd hyper-parameters and layers beyond
// block_count are load errors naming the tensor or key.
TEST(ModelLoader, NonFiniteValuesAndMismatchesAreNamed) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    auto poisoned = [&](const std::string& target, size_t element, float value, uint32_t matrix_type = GGML_TYPE_ID_F32) {
        TinySpec s;
        s.matrix_type = matrix_type;
        s.edit_data = [=](const std::string& name, std::vector<uint8_t>& d) {
            if (name != target) return;
            if (matrix_type == GGML_TYPE_ID_F32 || name.find("norm") != std::string::npos) {
                std::memcpy(d.data() + 4 * element, &value, 4);
            } else {  // Q8_0: the f16 scale of block `element`
                const uint16_t h = value != value ? 0x7e00 : 0x7c00;
                std::memcpy(d.data() + 34 * element, &h, 2);
            }
        };
        return test::model_load_error_removing(write_tiny(s, "poisoned.gguf"));
    };
    for (const auto& [tensor, element, value] : {std::tuple{std::string("output_norm.weight"), size_t(3), nan},
                                                 {std::string("blk.1.ffn_norm.weight"), size_t(63), inf},
                                                 {std::string("token_embd.weight"), size_t(1000), -inf},
                                                 {std::string("blk.0.attn_q.weight"), size_t(0), nan},
                                                 {std::string("blk.1.ffn_down.weight"), size_t(64 * 96 - 1), inf}}) {
        const std::string e = poisoned(tensor, element, value);
        EXPECT_NE(e.find("tensor '" + tensor + "' holds a non-finite value"), std::string::npos) << tensor << ": " << e;
    }
    // Quantized: a block scale of Inf or NaN (every block's scales are read; see block_scale_test.cpp).
    EXPECT_NE(poisoned("token_embd.weight", 7, inf, GGML_TYPE_ID_Q8_0).find("'token_embd.weight' (q8_0) block 7 of"), std::string::npos);
    EXPECT_NE(poisoned("blk.0.ffn_gate.weight", 0, nan, GGML_TYPE_ID_Q8_0).find("'blk.0.ffn_gate.weight' (q8_0) block 0 of"), std::string::npos);
    // Hyper-parameters.
    TinySpec inf_base;
    inf_base.freq_base = inf;
    EXPECT_NE(test::model_load_error_removing(write_tiny(inf_base, "hp.gguf")).find("rope.freq_base inf must be a finite positive number"), std::string::npos);
    TinySpec inf_eps;
    inf_eps.eps = inf;
    EXPECT_NE(test::model_load_error_removing(write_tiny(inf_eps, "hp.gguf")).find("layer_norm_rms_epsilon"), std::string::npos);
    // More layers in the file than block_count says.
    TinySpec extra;
    extra.extra_layers = 1;
    EXPECT_NE(test::model_load_error_removing(write_tiny(extra, "extra.gguf")).find("belongs to layer 2, but llama.block_count is 2"), std::string::npos);
}

}  // namespace
}  // namespace hetero
