// A block type checked against its own model decoded to f32: a random-weight
// model with every matrix in the type, its exact f32 copy, both run greedily
// on one device. What the type's kernels round is then all that differs.
#pragma once

#include <hetero/model/convert.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/quant.hpp>

#include "test_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hetero::test {

// The largest logit and the largest difference between two runs' logits.
struct LogitGap {
    double largest = 0.0;
    double worst = 0.0;
};

inline LogitGap logit_gap(const std::vector<float>& got, const std::vector<float>& want) {
    LogitGap gap;
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
        gap.largest = std::max(gap.largest, std::fabs(double(want[i])));
        gap.worst = std::max(gap.worst, std::fabs(double(got[i]) - double(want[i])));
    }
    return gap;
}

// Greedy tokens after "Once upon" on device 0 of `p`; with first_logits, also
// the logits of a fixed four-token prompt from a fresh session.
inline std::vector<int32_t> greedy_tokens(Provider* p, const std::string& path, int n, std::vector<float>* first_logits) {
    OpenedModel m = open_model(path);
    std::vector<DeviceRef> devs = {{p, 0, p->device_props(0)}};
    if (first_logits) {
        Session one(m.file, plan_even_layers(int(m.file.hparams.n_layer), devs));
        *first_logits = one.forward({1, 300, 17, 42}, 0);
    }
    Session s(m.file, plan_even_layers(int(m.file.hparams.n_layer), devs));
    Sampler g(SamplerOptions{0.f, 0, 1.f, 0});
    return generate(s, *m.tokenizer, "Once upon", n, g).tokens;
}

// What one comparison asks for: the type, the random model's preset and
// seed, a matrix that must hold the type, and the logits' tolerance as a
// share of the largest.
struct F32CopyCase {
    uint32_t dtype;
    std::string preset;
    uint64_t seed;
    std::string matrix;
    double rel_tol;
};

struct F32CopyTokens {
    std::vector<int32_t> quant, f32;
};

// Writes the model and its copy, checks `matrix` and the token embedding are
// in the type, runs both for 24 tokens on `p` and holds their first logits
// within the tolerance. The tokens are the caller's to judge: int8
// activations may flip a near-tie of a random model.
inline void expect_logits_near_f32_copy(Provider* p, const F32CopyCase& c, F32CopyTokens& tokens) {
    const std::string name = sdk::dtype_name(c.dtype);
    const std::string quant = temp_path(name + ".gguf").string(), f32 = temp_path(name + "_f32.gguf").string();
    write_random_model(quant, random_model_preset(c.preset), c.dtype, c.seed);
    quantize_gguf(quant, f32, HETERO_DTYPE_F32);  // every matrix decoded to f32, exactly
    {
        const ModelFile m = load_model(quant);
        EXPECT_EQ(m.weights.at(c.matrix).dtype, c.dtype);
        EXPECT_EQ(m.weights.at("token_embd.weight").dtype, c.dtype);
    }
    std::vector<float> lq, lf;
    tokens.quant = greedy_tokens(p, quant, 24, &lq);
    tokens.f32 = greedy_tokens(p, f32, 24, &lf);
    std::filesystem::remove(quant);
    std::filesystem::remove(f32);
    ASSERT_EQ(lq.size(), lf.size());
    const LogitGap gap = logit_gap(lq, lf);
    EXPECT_GT(gap.largest, 0.0);
    EXPECT_LT(gap.worst, c.rel_tol * gap.largest) << "largest logit difference " << gap.worst << " of " << gap.largest;
}

}  // namespace hetero::test
