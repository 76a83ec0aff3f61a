// The architectures beyond llama: what the loader reads from gen-model's
// files and the graph it builds for them.
#include "test_data.hpp"

#include <hetero/ep_api.h>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/model/rope_scaling.hpp>
#include <hetero/runtime/model_graph.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

namespace hetero {
namespace {

std::string arch_file(const std::string& arch, int64_t layers = 2, uint32_t dtype = HETERO_DTYPE_F32) {
    const std::string path = test::removed_at_exit(test::temp_path("arch_" + arch + ".gguf").string());
    RandomModelShape s = random_model_preset("tiny");
    s.n_layer = layers;
    write_random_model(path, s, dtype, 3, arch);
    return path;
}

ModelGraph graph_of(const ModelFile& m) {
    return build_model_graph(m, 3, 64, std::vector<uint32_t>(size_t(m.hparams.n_layer), HETERO_DTYPE_F32));
}

int count_ops(const ModelGraph& g, uint32_t op) {
    int n = 0;
    for (const ModelNode& mn : g.nodes) n += mn.node.op == op;
    return n;
}

TEST(Architectures, Qwen3NormsEachHeadOfQAndK) {
    const ModelFile m = load_model(arch_file("qwen3"));
    EXPECT_TRUE(m.hparams.qk_norm);
    EXPECT_EQ(m.hparams.rope_mode, HETERO_ROPE_HALVES);
    const ModelGraph g = graph_of(m);
    const int i = g.node_index(1, Role::q_norm);
    ASSERT_GE(i, 0);
    const hetero_tensor_desc& x = g.tensors[size_t(g.nodes[size_t(i)].node.inputs[0])].desc;
    EXPECT_EQ(x.ndim, 3u);  // [n, H, Hd]: RMSNORM over rows of the head size
    EXPECT_EQ(g.tensors[size_t(g.nodes[size_t(i)].node.inputs[1])].desc.shape[0], m.hparams.head_dim);
    EXPECT_GE(g.node_index(0, Role::k_norm), 0);
}

TEST(Architectures, Phi3FusedTensorsAreRowViews) {
    const ModelFile m = load_model(arch_file("phi3", 2, HETERO_DTYPE_Q8_0));
    const WeightView& q = m.weight("blk.0.attn_q.weight");
    const WeightView& k = m.weight("blk.0.attn_k.weight");
    const WeightView& gate = m.weight("blk.1.ffn_gate.weight");
    const WeightView& up = m.weight("blk.1.ffn_up.weight");
    EXPECT_EQ(q.shape, (std::vector<int64_t>{64, 64}));
    EXPECT_EQ(k.shape, (std::vector<int64_t>{32, 64}));
    EXPECT_EQ(k.data, q.data + q.bytes);  // K follows Q inside attn_qkv
    EXPECT_EQ(up.data, gate.data + gate.bytes);
    EXPECT_EQ(up.shape, (std::vector<int64_t>{192, 64}));
    EXPECT_FALSE(m.has("blk.0.attn_qkv.weight"));
}

TEST(Architectures, Llama3FactorsFromMetadataEqualTheTensor) {
    const ModelFile t = load_model(arch_file("llama3"));
    const ModelFile meta = load_model(arch_file("llama3-meta"));
    const WeightView& a = t.weight("rope_freqs.weight");
    const WeightView& b = meta.weight("rope_freqs.weight");
    ASSERT_EQ(a.shape, (std::vector<int64_t>{8}));
    ASSERT_EQ(b.shape, a.shape);
    const float* fa = reinterpret_cast<const float*>(a.data);
    const float* fb = reinterpret_cast<const float*>(b.data);
    for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(fa[i], fb[i]) << i;
    EXPECT_FLOAT_EQ(fa[0], 1.f);  // short wavelengths keep their frequency
    EXPECT_FLOAT_EQ(fa[7], 8.f);  // long ones are slowed by the factor
    EXPECT_EQ(count_ops(graph_of(t), HETERO_OP_ROPE_SCALED), 4);
    EXPECT_EQ(count_ops(graph_of(t), HETERO_OP_ROPE), 0);
}

TEST(Architectures, LinearScalingSetsTheFrequencyScale) {
    const ModelFile m = load_model(arch_file("llama-linear"));
    EXPECT_FLOAT_EQ(m.hparams.rope_freq_scale, 0.25f);
    const ModelGraph g = graph_of(m);
    const int i = g.node_index(0, Role::rope_q);
    EXPECT_EQ(g.nodes[size_t(i)].node.op, uint32_t(HETERO_OP_ROPE_SCALED));
    EXPECT_FLOAT_EQ(g.nodes[size_t(i)].node.fparams[1], 0.25f);
}

TEST(Architectures, MistralAttendsThroughItsWindow) {
    const ModelFile m = load_model(arch_file("mistral"));
    EXPECT_EQ(m.hparams.n_swa, 8);
    const ModelGraph g = graph_of(m);
    for (int l = 0; l < 2; ++l) {
        const hetero_node& a = g.nodes[size_t(g.node_index(l, Role::attention))].node;
        EXPECT_EQ(a.op, uint32_t(HETERO_OP_ATTENTION_EXT));
        EXPECT_EQ(a.iparams[0], 8);
    }
}

TEST(Architectures, Gemma2AlternatesWindowsAndCapsScoresAndLogits) {
    const ModelFile m = load_model(arch_file("gemma2"));
    const LlamaHParams& hp = m.hparams;
    EXPECT_TRUE(hp.embd_scale && hp.gelu_ffn && hp.post_norms && hp.tied_output);
    EXPECT_EQ(hp.swa_layers, (std::vector<bool>{true, false}));
    const ModelGraph g = graph_of(m);
    EXPECT_EQ(g.nodes[size_t(g.node_index(0, Role::attention))].node.iparams[0], 8);
    EXPECT_EQ(g.nodes[size_t(g.node_index(1, Role::attention))].node.iparams[0], 0);
    EXPECT_FLOAT_EQ(g.nodes[size_t(g.node_index(1, Role::attention))].node.fparams[1], 4.f);
    EXPECT_EQ(count_ops(g, HETERO_OP_GEGLU), 2);
    EXPECT_EQ(count_ops(g, HETERO_OP_SOFTCAP), 1);
    EXPECT_GE(g.node_index(0, Role::embd_scale), 0);
    EXPECT_GE(g.node_index(1, Role::ffn_post_norm), 0);
}

TEST(Architectures, Gemma3HasFiveLocalLayersPerGlobalOneWithTheirOwnBase) {
    const ModelFile m = load_model(arch_file("gemma3", 6));
    EXPECT_EQ(m.hparams.swa_layers, (std::vector<bool>{true, true, true, true, true, false}));
    const ModelGraph g = graph_of(m);
    EXPECT_FLOAT_EQ(g.nodes[size_t(g.node_index(0, Role::rope_q))].node.fparams[0], 10000.f);
    EXPECT_FLOAT_EQ(g.nodes[size_t(g.node_index(5, Role::rope_q))].node.fparams[0], 1000000.f);
    EXPECT_EQ(g.nodes[size_t(g.node_index(5, Role::attention))].node.op, uint32_t(HETERO_OP_ATTENTION));
    EXPECT_EQ(count_ops(g, HETERO_OP_SOFTCAP), 0);
    EXPECT_GE(g.node_index(2, Role::q_norm), 0);
}

}  // namespace
}  // namespace hetero
