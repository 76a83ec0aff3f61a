// GGUF K-quants (Q4_K, Q5_K, Q6_K): the block layouts decode as GGUF defines
// them, the reference quantizers round-trip, and a random-weight model with
// K-quant matrices computes on the cpu provider the logits its dequantised
// (f32) copy does, within the activations' int8 rounding. Devices that do not list the dtypes are left out of the plan.
#include <hetero/error.hpp>
#include <hetero/model/convert.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include "build_tree_registry.hpp"
#include "f32_copy_checks.hpp"

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace hetero {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return test::temp_path("kquant_" + name).string(); }

TEST(KQuant, SizesAndNames) {
    EXPECT_EQ(sdk::row_bytes(HETERO_DTYPE_Q4_K, 4096), 16u * 144u);
    EXPECT_EQ(sdk::row_bytes(HETERO_DTYPE_Q5_K, 512), 2u * 176u);
    EXPECT_EQ(sdk::row_bytes(HETERO_DTYPE_Q6_K, 256), 210u);
    EXPECT_STREQ(sdk::dtype_name(HETERO_DTYPE_Q4_K), "q4_K");
    EXPECT_STREQ(sdk::dtype_name(HETERO_DTYPE_Q6_K), "q6_K");
    EXPECT_EQ(sdk::block_elems(HETERO_DTYPE_Q5_K), 256);
    hetero_tensor_desc t{};
    t.ndim = 2;
    t.shape[0] = 3;
    t.shape[1] = 300;
    t.dtype = HETERO_DTYPE_Q4_K;
    EXPECT_NE(sdk::check_tensor(t).find("divisible by 256"), std::string::npos) << sdk::check_tensor(t);
}

// A K-quant tensor whose rows do not hold whole super-blocks is refused by
// name when the file is opened.
TEST(KQuant, RowsMustHoldWholeSuperBlocks) {
    GgufWriter w;
    w.add_string("general.architecture", "test");
    std::vector<uint8_t> blocks(2 * 144, 0);
    w.add_tensor("kq_narrow", GGML_TYPE_ID_Q4_K, {256, 2}, blocks.data(), blocks.size());
    std::vector<uint8_t> image = w.to_bytes();
    const auto at = std::search(image.begin(), image.end(), std::begin("kq_narrow"), std::end("kq_narrow") - 1);
    ASSERT_NE(at, image.end());
    // Tensor info: name, u32 n_dims, u64 ne[0], ...: make the rows 128 wide, 4 of them.
    const size_t ne0 = size_t(at - image.begin()) + 9 + 4;
    const uint64_t ne[2] = {128, 4};
    std::memcpy(image.data() + ne0, ne, sizeof ne);
    const std::string path = temp_path("narrow.gguf");
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(image.data()), std::streamsize(image.size()));
    }
    try {
        GgufFile::open(path);
        ADD_FAILURE() << "a q4_K tensor with rows of 128 was accepted";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("kq_narrow"), std::string::npos) << msg;
        EXPECT_NE(msg.find("256"), std::string::npos) << msg;
    }
    fs::remove(path);
}

// Hand-built blocks: each field sits where GGUF puts it.
TEST(KQuant, Q4KLayout) {
    sdk::BlockQ4K b{};
    b.d = sdk::f32_to_f16(0.5f);
    b.dmin = sdk::f32_to_f16(0.25f);
    // Sub-block 1: scale 3, min 2 (low 6 bits of bytes 1 and 5). Sub-block 6:
    // scale 37 = 0b100101, min 18 = 0b010010: low nibbles in byte 10, top
    // bits in bytes 2 (scale) and 6 (min).
    b.scales[1] = 3;
    b.scales[5] = 2;
    b.scales[10] = uint8_t((37 & 15) | ((18 & 15) << 4));
    b.scales[2] = uint8_t((37 >> 4) << 6);
    b.scales[6] = uint8_t((18 >> 4) << 6);
    b.qs[5] = 0x70;         // element 32 + 5 (sub-block 1, high nibble) = 7
    b.qs[96 + 9] = 0x0b;    // element 192 + 9 (sub-block 6, low nibble) = 11
    float y[256];
    sdk::dequantize_block_q4_k(b, y);
    EXPECT_FLOAT_EQ(y[37], 0.5f * 3 * 7 - 0.25f * 2);
    EXPECT_FLOAT_EQ(y[36], -0.25f * 2);
    EXPECT_FLOAT_EQ(y[201], 0.5f * 37 * 11 - 0.25f * 18);
    EXPECT_FLOAT_EQ(y[0], 0.f);  // sub-block 0: scale 0, min 0
}

TEST(KQuant, Q5KLayout) {
    sdk::BlockQ5K b{};
    b.d = sdk::f32_to_f16(1.f);
    b.scales[3] = 1;                    // sub-block 3: scale 1, min 0
    b.qs[32 + 4] = 0x20;                // element 96 + 4: low 4 bits 2
    b.qh[4] = uint8_t(1u << 3);         // fifth bit of sub-block 3's element 4
    float y[256];
    sdk::dequantize_block_q5_k(b, y);
    EXPECT_FLOAT_EQ(y[100], 18.f);
    EXPECT_FLOAT_EQ(y[99], 0.f);
}

TEST(KQuant, Q6KLayout) {
    sdk::BlockQ6K b{};
    b.d = sdk::f32_to_f16(0.5f);
    for (int i = 0; i < 16; ++i) b.scales[i] = int8_t(i + 1);
    // Element 128 + 64 + 20 (half 1, +64, l = 20): low nibble in the high
    // half of ql[64 + 20], high bits at bits 4..5 of qh[32 + 20].
    b.ql[64 + 20] = 0x50;
    b.qh[32 + 20] = uint8_t(2 << 4);
    float y[256];
    sdk::dequantize_block_q6_k(b, y);
    const int e = 128 + 64 + 20;
    EXPECT_FLOAT_EQ(y[e], 0.5f * float(b.scales[e / 16]) * float((5 | (2 << 4)) - 32));
    EXPECT_FLOAT_EQ(y[0], 0.5f * 1 * -32.f);
}

TEST(KQuant, QuantizersRoundTrip) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> x(1024), y(1024);
    for (float& v : x) v = dist(rng);
    x[7] = 0.f;
    for (int i = 256; i < 512; ++i) x[size_t(i)] = 0.f;  // an all-zero block
    for (uint32_t dt : {HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K}) {
        std::vector<uint8_t> bytes(sdk::row_bytes(dt, 1024));
        sdk::row_from_f32(dt, x.data(), bytes.data(), 1024);
        sdk::row_to_f32(dt, bytes.data(), y.data(), 1024);
        // Steps: 2/15 (Q4_K), 2/31 (Q5_K), 1/32 (Q6_K), plus scale rounding.
        const double tol = dt == HETERO_DTYPE_Q4_K ? 0.11 : dt == HETERO_DTYPE_Q5_K ? 0.06 : 0.025;
        double worst = 0.0;
        for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(double(x[i]) - double(y[i])));
        EXPECT_LT(worst, tol) << sdk::dtype_name(dt);
        for (int i = 256; i < 512; ++i) EXPECT_EQ(y[size_t(i)], 0.f) << sdk::dtype_name(dt);
    }
}

// A random model with K-quant matrices against the same model dequantised to f32.
class KQuantModel : public testing::TestWithParam<uint32_t> {};

TEST_P(KQuantModel, LogitsMatchItsF32Copy) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    // Every kernel path puts the activations of a K-quant matmul on
    // llama.cpp's Q8_K grid (int8, one scale per 256), which moves these
    // logits by about 1% of the largest.
    test::F32CopyTokens tokens;
    test::expect_logits_near_f32_copy(cpu, {GetParam(), "tiny-k", 11, "blk.0.ffn_down.weight", 2.5e-2}, tokens);
    // Greedy tokens are not compared with the f32 copy's: the random model's
    // distributions are nearly flat, and the int8 activations can flip a
    // near-tie (the Q5_K file parts from its f32 copy at the first token, as
    // llama.cpp does on the same file). Agreement with llama.cpp is what
    // tests/arch/peer_logits.sh checks.
    EXPECT_FALSE(tokens.quant.empty());
    EXPECT_FALSE(tokens.f32.empty());
}

INSTANTIATE_TEST_SUITE_P(Types, KQuantModel, testing::Values(HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K),
                         [](const testing::TestParamInfo<uint32_t>& i) { return std::string(sdk::dtype_name(i.param)); });

// Providers that do not list the K-quants in dtype_mask (npu_emu) are
// refused the matmuls, with the dtype named, and dropped for such a model.
TEST(KQuant, DevicesWithoutTheDtypeAreLeftOut) {
    const std::string kq = temp_path("plan.gguf");
    write_random_model(kq, random_model_preset("tiny-k"), HETERO_DTYPE_Q4_K, 5);
    const ModelFile m = load_model(kq);
    std::vector<DeviceRef> devs;
    for (Provider* p : test::build_tree_registry().providers())
        for (uint32_t d = 0; d < p->device_count(); ++d) devs.push_back({p, d, p->device_props(d)});
    const auto kept = devices_for_model(m, devs, 64);
    for (const DeviceRef& d : devs) {
        const bool lists = (d.props.dtype_mask & HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_K)) != 0;
        const bool is_kept = std::any_of(kept.begin(), kept.end(), [&](const DeviceRef& k) { return k.provider == d.provider && k.index == d.index; });
        if (!lists) {
            EXPECT_FALSE(is_kept) << d.label();
            const ModelGraph g = build_model_graph(m, 1, 64, std::vector<uint32_t>(size_t(m.hparams.n_layer), HETERO_DTYPE_F16));
            for (size_t i = 0; i < g.nodes.size(); ++i) {
                if (g.nodes[i].node.op != HETERO_OP_MATMUL) continue;
                const std::string why = unsupported_reason(d, g, i);
                EXPECT_NE(why.find("q4_K"), std::string::npos) << d.label() << ": " << why;
                break;
            }
        }
        if (d.provider->name() == "cpu") {
            EXPECT_TRUE(is_kept);
        }
    }
    fs::remove(kq);
}

}  // namespace
}  // namespace hetero
