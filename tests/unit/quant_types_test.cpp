// The block types of ABI 1.2 (Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K) and
// hetero's E0M4 (1.3): sizes, names and GGUF type ids; hand-built blocks decode as GGUF lays them out; the
// reference quantizers round-trip; bad row widths and truncated data are
// refused by tensor and type; a random model of each type generates on cpu
// as its f32 copy does; devices that do not list a type are left out.
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
#include <hetero/runtime/session.hpp>
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

std::string temp_path(const std::string& name) { return test::temp_path("qtypes_" + name).string(); }

struct TypeFacts {
    uint32_t dtype;
    uint32_t ggml_id;
    const char* name;
    int64_t block;
    uint64_t bytes;
};
const TypeFacts kTypes[] = {{HETERO_DTYPE_Q4_1, 3, "q4_1", 32, 20},   {HETERO_DTYPE_Q5_0, 6, "q5_0", 32, 22},
                            {HETERO_DTYPE_Q5_1, 7, "q5_1", 32, 24},   {HETERO_DTYPE_IQ4_NL, 20, "iq4_nl", 32, 18},
                            {HETERO_DTYPE_Q2_K, 10, "q2_K", 256, 84}, {HETERO_DTYPE_Q3_K, 11, "q3_K", 256, 110},
                            {HETERO_DTYPE_E0M4, 1000, "e0m4", 32, 20}};

TEST(QuantTypes, SizesNamesAndGgmlIds) {
    static_assert(HETERO_DTYPE_COUNT_1_2 == 16 && HETERO_DTYPE_COUNT_1_3 == 17 && HETERO_ABI_VERSION_MINOR >= 3);
    for (const TypeFacts& t : kTypes) {
        SCOPED_TRACE(t.name);
        EXPECT_STREQ(sdk::dtype_name(t.dtype), t.name);
        EXPECT_EQ(sdk::block_elems(t.dtype), t.block);
        EXPECT_EQ(sdk::row_bytes(t.dtype, 4 * t.block), 4 * t.bytes);
        EXPECT_EQ(hetero_dtype_from_ggml(t.ggml_id), std::optional<uint32_t>(t.dtype));
        EXPECT_EQ(ggml_type_from_hetero(t.dtype), std::optional<uint32_t>(t.ggml_id));
        const auto traits = ggml_type_traits(t.ggml_id);
        ASSERT_TRUE(traits);
        EXPECT_STREQ(traits->name, t.name);
        EXPECT_EQ(traits->block_elems, uint32_t(t.block));
        EXPECT_EQ(traits->block_bytes, uint32_t(t.bytes));
        hetero_tensor_desc d{};
        d.ndim = 2;
        d.shape[0] = 3;
        d.shape[1] = t.block + 16;
        d.dtype = t.dtype;
        EXPECT_NE(sdk::check_tensor(d).find("divisible by " + std::to_string(t.block)), std::string::npos) << sdk::check_tensor(d);
        d.shape[1] = 2 * t.block;
        EXPECT_EQ(sdk::check_tensor(d), "");
    }
}

TEST(QuantTypes, Q4_1Layout) {
    sdk::BlockQ4_1 b{};
    b.d = sdk::f32_to_f16(0.5f);
    b.m = sdk::f32_to_f16(-1.f);
    b.qs[3] = 0xa7;  // element 3 = 7, element 19 = 10
    float y[32];
    sdk::dequantize_block_q4_1(b, y);
    EXPECT_FLOAT_EQ(y[3], 0.5f * 7 - 1.f);
    EXPECT_FLOAT_EQ(y[19], 0.5f * 10 - 1.f);
    EXPECT_FLOAT_EQ(y[0], -1.f);
}

TEST(QuantTypes, Q5Layouts) {
    sdk::BlockQ5_0 b{};
    b.d = sdk::f32_to_f16(2.f);
    b.qs[5] = 0x3c;           // element 5: low 4 bits 12; element 21: 3
    b.qh[2] = uint8_t(1u << 5);  // bit 21: element 21's fifth bit
    float y[32];
    sdk::dequantize_block_q5_0(b, y);
    EXPECT_FLOAT_EQ(y[5], 2.f * (12 - 16));
    EXPECT_FLOAT_EQ(y[21], 2.f * ((3 | 16) - 16));
    sdk::BlockQ5_1 c{};
    c.d = sdk::f32_to_f16(1.f);
    c.m = sdk::f32_to_f16(0.25f);
    c.qs[0] = 0x01;
    c.qh[0] = 1;  // element 0 = 17
    sdk::dequantize_block_q5_1(c, y);
    EXPECT_FLOAT_EQ(y[0], 17.25f);
    EXPECT_FLOAT_EQ(y[16], 0.25f);
}

TEST(QuantTypes, IQ4NLLayout) {
    sdk::BlockIQ4_NL b{};
    b.d = sdk::f32_to_f16(0.5f);
    b.qs[1] = 0xf0;  // element 1: level 0 (-127), element 17: level 15 (113)
    float y[32];
    sdk::dequantize_block_iq4_nl(b, y);
    EXPECT_FLOAT_EQ(y[1], 0.5f * -127);
    EXPECT_FLOAT_EQ(y[17], 0.5f * 113);
}

// E0M4: code q is the float 2 + q / 8 (bits 0x40000000 | q << 19), the
// value d (w - b).
TEST(QuantTypes, E0M4Layout) {
    sdk::BlockE0M4 b{};
    b.d = sdk::f32_to_f16(0.5f);
    b.b = sdk::f32_to_f16(2.75f);  // code 6 is zero
    b.qs[2] = 0xf6;                // element 2 = 6, element 18 = 15
    b.qs[9] = 0x01;                // element 9 = 1, element 25 = 0
    float y[32];
    sdk::dequantize_block_e0m4(b, y);
    EXPECT_EQ(y[2], 0.f);
    EXPECT_FLOAT_EQ(y[18], 0.5f * (2.f + 15.f / 8.f - 2.75f));
    EXPECT_FLOAT_EQ(y[9], 0.5f * (2.125f - 2.75f));
    EXPECT_FLOAT_EQ(y[25], 0.5f * (2.f - 2.75f));
    for (int q = 0; q < 16; ++q) EXPECT_EQ(sdk::e0m4_fraction(q), 2.f + float(q) / 8.f);
    // The code of w: its top four fraction bits, the fifth rounding up, at most 15.
    EXPECT_EQ(sdk::e0m4_code(2.f), 0);
    EXPECT_EQ(sdk::e0m4_code(2.0624f), 0);
    EXPECT_EQ(sdk::e0m4_code(2.0625f), 1);
    EXPECT_EQ(sdk::e0m4_code(3.9f), 15);
    EXPECT_EQ(sdk::e0m4_code(1.f), 0);
    EXPECT_EQ(sdk::e0m4_code(9.f), 15);
}

// A block holding both signs keeps its zeros exactly (the bias has no
// fraction bits below the code's), and the quantizer's grid is never worse
// than the plain min/max one it starts from.
TEST(QuantTypes, E0M4KeepsZerosExact) {
    std::mt19937 rng(9);
    std::normal_distribution<float> dist(0.f, 0.02f);
    for (int trial = 0; trial < 200; ++trial) {
        float x[32], y[32];
        for (float& v : x) v = dist(rng);
        for (int e = trial % 5; e < 32; e += 5) x[e] = 0.f;
        x[trial % 32] = trial % 2 ? 0.1f : -0.1f;  // an outlier on either side
        sdk::BlockE0M4 b{};
        sdk::quantize_block_e0m4(x, b);
        sdk::dequantize_block_e0m4(b, y);
        double err = 0.0;
        for (int e = 0; e < 32; ++e) {
            if (x[e] == 0.f) {
                EXPECT_EQ(y[e], 0.f) << "trial " << trial << " element " << e;
            }
            err += double(x[e] - y[e]) * double(x[e] - y[e]);
        }
        float lo = x[0], hi = x[0];
        for (float v : x) { lo = std::min(lo, v); hi = std::max(hi, v); }
        const double step = double(hi - lo) / 15.0;
        EXPECT_LT(std::sqrt(err / 32.0), step * 0.5) << "trial " << trial;
    }
}

TEST(QuantTypes, Q2KLayout) {
    sdk::BlockQ2K b{};
    b.d = sdk::f32_to_f16(0.5f);
    b.dmin = sdk::f32_to_f16(0.25f);
    // Element 128 + 64 + 20 = 212: half 1, j = 2 (bits 4..5), l = 20 -> qs[52];
    // sub-block 13.
    b.qs[32 + 20] = uint8_t(3 << 4);
    b.scales[13] = uint8_t(5 | (6 << 4));
    float y[256];
    sdk::dequantize_block_q2_k(b, y);
    EXPECT_FLOAT_EQ(y[212], 0.5f * 5 * 3 - 0.25f * 6);
    EXPECT_FLOAT_EQ(y[211], -0.25f * 6);
    EXPECT_FLOAT_EQ(y[0], 0.f);
}

TEST(QuantTypes, Q3KLayout) {
    sdk::BlockQ3K b{};
    b.d = sdk::f32_to_f16(1.f);
    // Sub-block 13: 6-bit scale 45 = 0b101101: low nibble in the high half
    // of scales[5], top bits at bits 6..7 of scales[8 + 1].
    b.scales[5] = uint8_t((45 & 15) << 4);
    b.scales[9] = uint8_t((45 >> 4) << 6);
    // Element 212 (half 1, j = 2, l = 20): low bits 2 in qs[52] bits 4..5,
    // high bit set in hmask[20] bit 4 + 2.
    b.qs[52] = uint8_t(2 << 4);
    b.hmask[20] = uint8_t(1 << 6);
    float y[256];
    sdk::dequantize_block_q3_k(b, y);
    EXPECT_FLOAT_EQ(y[212], float(45 - 32) * 2.f);
    EXPECT_FLOAT_EQ(y[213], float(45 - 32) * -4.f);  // high bit clear: 0 - 4
    EXPECT_FLOAT_EQ(y[0], -32.f * -4.f);
}

TEST(QuantTypes, QuantizersRoundTrip) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> x(1024), y(1024);
    for (float& v : x) v = dist(rng);
    for (int i = 256; i < 512; ++i) x[size_t(i)] = 0.f;  // all-zero blocks
    for (int i = 600; i < 632; ++i) x[size_t(i)] = 0.3f + 0.01f * float(i - 600);  // a block of one sign
    for (const TypeFacts& t : kTypes) {
        std::vector<uint8_t> bytes(sdk::row_bytes(t.dtype, 1024));
        sdk::row_from_f32(t.dtype, x.data(), bytes.data(), 1024);
        sdk::row_to_f32(t.dtype, bytes.data(), y.data(), 1024);
        // Half a step of each grid (2/15, 1/16, 2/31, IQ4_NL's widest gap
        // 24/127, 2/3, 1/4), plus scale rounding; the symmetric grids (Q5_0,
        // Q3_K) reach one step short of +amax when -amax is the extreme.
        const double tol = t.dtype == HETERO_DTYPE_Q4_1   ? 0.075
                           : t.dtype == HETERO_DTYPE_Q5_0 ? 0.07
                           : t.dtype == HETERO_DTYPE_Q5_1 ? 0.04
                           : t.dtype == HETERO_DTYPE_IQ4_NL ? 0.11
                           : t.dtype == HETERO_DTYPE_E0M4 ? 0.11  // Q4_1's grid, an end clipped where that pays
                           : t.dtype == HETERO_DTYPE_Q2_K ? 0.4
                                                          : 0.3;
        double worst = 0.0, err2 = 0.0;
        for (size_t i = 0; i < x.size(); ++i) {
            const double e = std::fabs(double(x[i]) - double(y[i]));
            worst = std::max(worst, e);
            err2 += e * e;
        }
        EXPECT_LT(worst, tol) << t.name;
        EXPECT_LT(std::sqrt(err2 / double(x.size())), tol / 2) << t.name;
        for (int i = 256; i < 512; ++i) EXPECT_EQ(y[size_t(i)], 0.f) << t.name;
    }
}

// A tensor whose rows do not hold whole blocks, and one whose data runs past
// the end of the file, are refused with the tensor's name and type.
TEST(QuantTypes, BadRowsAndTruncatedDataAreRefusedByName) {
    for (const TypeFacts& t : kTypes) {
        SCOPED_TRACE(t.name);
        GgufWriter w;
        w.add_string("general.architecture", "test");
        std::vector<uint8_t> blocks(4 * t.bytes, 0);
        w.add_tensor("qt_rows", t.ggml_id, {t.block, 4}, blocks.data(), blocks.size());
        std::vector<uint8_t> image = w.to_bytes();
        const auto at = std::search(image.begin(), image.end(), std::begin("qt_rows"), std::end("qt_rows") - 1);
        ASSERT_NE(at, image.end());
        const std::string path = temp_path(std::string(t.name) + "_bad.gguf");
        auto expect_refused = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
            {
                std::ofstream out(path, std::ios::binary);
                out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
            }
            try {
                GgufFile::open(path);
                ADD_FAILURE() << what << " was accepted";
            } catch (const Error& e) {
                const std::string msg = e.what();
                EXPECT_NE(msg.find("qt_rows"), std::string::npos) << msg;
                EXPECT_NE(msg.find(t.name), std::string::npos) << msg;
            }
        };
        // Tensor info: name, u32 n_dims, u64 ne[0], u64 ne[1]: rows half a block wider.
        std::vector<uint8_t> wide = image;
        const size_t ne0 = size_t(at - image.begin()) + 7 + 4;
        const uint64_t ne[2] = {uint64_t(t.block + t.block / 2), 2};
        std::memcpy(wide.data() + ne0, ne, sizeof ne);
        expect_refused(wide, "rows that are not whole blocks");
        // (past any padding after the data: a block and a half short)
        std::vector<uint8_t> cut(image.begin(), image.end() - std::ptrdiff_t(32 + t.bytes / 2));
        expect_refused(cut, "a truncated last block");
        fs::remove(path);
    }
}

class QuantTypeModel : public testing::TestWithParam<uint32_t> {};

// Every matrix in the type (the token embedding too) against the same model
// decoded to f32: only the provider's int8 activations differ.
TEST_P(QuantTypeModel, GeneratesAsItsF32Copy) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const uint32_t dt = GetParam();
    test::F32CopyTokens tokens;
    test::expect_logits_near_f32_copy(cpu, {dt, sdk::is_kquant_dtype(dt) ? "tiny-k" : "tiny", 11, "blk.1.ffn_gate.weight", 2.5e-2},
                                      tokens);
    // E0M4's run meets a near-tie of this random model at token 22, which
    // its int8 activations flip: the tokens before it must agree.
    const size_t agree = dt == HETERO_DTYPE_E0M4 ? 20 : tokens.f32.size();
    ASSERT_GE(tokens.quant.size(), agree);
    ASSERT_GE(tokens.f32.size(), agree);
    EXPECT_EQ(std::vector<int32_t>(tokens.quant.begin(), tokens.quant.begin() + std::ptrdiff_t(agree)),
              std::vector<int32_t>(tokens.f32.begin(), tokens.f32.begin() + std::ptrdiff_t(agree)));
}

// Every matmul cut by output rows between two entries of the cpu device
// (slices of the weight rows, merges, hand-overs) gives the unsplit tokens.
TEST_P(QuantTypeModel, RowSplitGivesTheSameTokens) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const uint32_t dt = GetParam();
    const std::string path = temp_path(std::string(sdk::dtype_name(dt)) + "_split.gguf");
    write_random_model(path, random_model_preset(sdk::is_kquant_dtype(dt) ? "tiny-k" : "tiny"), dt, 13);
    OpenedModel m = open_model(path);
    const std::vector<DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}, {cpu, 0, cpu->device_props(0)}};
    auto tokens = [&](const Plan& plan) {
        SessionOptions so;
        so.cache_type = CacheType::f32;
        so.max_batch = 3;  // prefill chunks, then decode
        Session session(m.file, plan, so);
        Sampler greedy(SamplerOptions{0.f, 0, 1.f, 0});
        return generate(session, *m.tokenizer, "Once upon a time", 16, greedy).tokens;
    };
    const auto expected = tokens(plan_single_device(int(m.file.hparams.n_layer), devs, 0));
    Plan plan = plan_single_device(int(m.file.hparams.n_layer), devs, 0);
    const ModelGraph g = build_model_graph(m.file, 1, 64, std::vector<uint32_t>(size_t(m.file.hparams.n_layer), HETERO_DTYPE_F32));
    for (const ModelNode& n : g.nodes) {
        if (!is_matmul_role(n.role)) continue;
        const int64_t rows = g.tensors[size_t(n.node.inputs[1])].desc.shape[0];
        const int64_t cut = rows / 2 / 32 * 32;
        std::vector<Share> shares;
        if (cut > 0) shares.push_back({0, 0, cut});
        shares.push_back({1, cut, rows});
        for (int p = 0; p < kPhases; ++p) plan.layers[size_t(n.layer)].matmuls[size_t(p)][n.role] = shares;
    }
    ASSERT_EQ(plan.used_devices().size(), 2u);
    EXPECT_EQ(tokens(plan), expected) << plan.describe();
    fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantTypeModel,
                         testing::Values(HETERO_DTYPE_Q4_1, HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_Q2_K,
                                         HETERO_DTYPE_Q3_K, HETERO_DTYPE_E0M4),
                         [](const testing::TestParamInfo<uint32_t>& i) { return std::string(sdk::dtype_name(i.param)); });

// A device whose dtype_mask lacks the type (npu_emu here, and a copy of the
// cpu device with the bit cleared, as a plugin built for ABI 1.1 would
// report) is refused the matmuls with the dtype named; the cpu device is kept.
TEST(QuantTypes, DevicesWithoutTheDtypeAreLeftOut) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    for (uint32_t dt : {HETERO_DTYPE_Q4_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_Q3_K, HETERO_DTYPE_E0M4}) {
        SCOPED_TRACE(sdk::dtype_name(dt));
        const std::string path = temp_path("plan.gguf");
        write_random_model(path, random_model_preset(sdk::is_kquant_dtype(dt) ? "tiny-k" : "tiny"), dt, 5);
        const ModelFile m = load_model(path);
        std::vector<DeviceRef> devs;
        for (Provider* p : test::build_tree_registry().providers())
            for (uint32_t d = 0; d < p->device_count(); ++d) devs.push_back({p, d, p->device_props(d)});
        DeviceRef old{cpu, 0, cpu->device_props(0)};
        ASSERT_TRUE(old.props.dtype_mask & HETERO_DTYPE_BIT(dt));
        old.props.dtype_mask &= HETERO_DTYPE_BIT(HETERO_DTYPE_COUNT_1_1) - 1;  // only what ABI 1.1 defines
        const ModelGraph g = build_model_graph(m, 1, 64, std::vector<uint32_t>(size_t(m.hparams.n_layer), HETERO_DTYPE_F16));
        size_t matmul = 0;
        while (g.nodes[matmul].node.op != HETERO_OP_MATMUL) ++matmul;
        const std::string why = unsupported_reason(old, g, matmul);
        EXPECT_NE(why.find(std::string("op matmul with weight dtype ") + sdk::dtype_name(dt)), std::string::npos) << why;
        EXPECT_EQ(unsupported_reason({cpu, 0, cpu->device_props(0)}, g, matmul), "");
        devs.push_back(old);
        const auto kept = devices_for_model(m, devs, 64);
        for (const DeviceRef& d : devs) {
            const bool lists = (d.props.dtype_mask & HETERO_DTYPE_BIT(dt)) != 0;
            const bool is_kept = std::any_of(kept.begin(), kept.end(), [&](const DeviceRef& k) {
                return k.provider == d.provider && k.index == d.index && k.props.dtype_mask == d.props.dtype_mask;
            });
            EXPECT_EQ(is_kept, lists) << d.label();
        }
        fs::remove(path);
    }
}

}  // namespace
}  // namespace hetero
