// Hyper-parameters held to the ranges real models use: a sliding window of
// 0, a RoPE scaling factor of 1e-30, rope_freqs of -1 or 1e38, a NaN
// rope.scaling.* key in any Llama 3 variant, absurd soft-caps and bases are
// load errors naming the key (or tensor element) and the value, where they
// used to run and print garbage.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>

#include <gtest/gtest.h>

#include "gguf_edit.hpp"
#include "error_message.hpp"
#include "test_data.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>

namespace hetero {
namespace {

namespace fs = std::filesystem;

std::string temp_model(const std::string& name) { return test::temp_path("hparam_range_" + name + ".gguf").string(); }

// A generated model of `arch` with metadata `key` replaced by what `set` writes.
std::string with_key(const std::string& arch, const std::string& key, const std::function<void(GgufWriter&)>& set,
                     const std::function<void(GgufWriter&)>& more = nullptr) {
    const std::string base = temp_model(arch), edited = temp_model(arch + "_edited");
    write_random_model(base, random_model_preset("tiny"), HETERO_DTYPE_F32, 3, arch);
    test::rewrite_gguf(base, edited, [&](const std::string& k) { return k == key; }, [&](GgufWriter& w) {
        set(w);
        if (more) more(w);
    });
    fs::remove(base);
    return edited;
}

void expect_named(const std::string& error, const std::string& what) {
    EXPECT_NE(error.find(what), std::string::npos) << "expected \"" << what << "\" in: " << (error.empty() ? "(loaded)" : error);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(HParamRanges, GeneratedModelsLoad) {
    for (const char* arch : {"llama", "llama3", "llama3-meta", "llama-linear", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"}) {
        const std::string path = temp_model(arch);
        write_random_model(path, random_model_preset("tiny"), HETERO_DTYPE_F32, 3, arch);
        EXPECT_EQ(test::model_load_error_removing(path), "") << arch;
    }
}

// <arch>.pooling_type is read (embeddings pool as it says), and a number no writer uses is refused by name.
TEST(HParamRanges, PoolingTypeIsReadAndChecked) {
    const std::string last = with_key("qwen3", "qwen3.pooling_type", [](GgufWriter& w) { w.add_uint32("qwen3.pooling_type", 3); });
    EXPECT_EQ(load_model(last).hparams.pooling_type, 3);
    fs::remove(last);
    const std::string none = temp_model("llama_no_pooling");
    write_random_model(none, random_model_preset("tiny"), HETERO_DTYPE_F32, 3, "llama");
    EXPECT_EQ(load_model(none).hparams.pooling_type, -1);
    fs::remove(none);
    expect_named(test::model_load_error_removing(with_key("llama", "llama.pooling_type", [](GgufWriter& w) { w.add_uint32("llama.pooling_type", 9); })),
                 "llama.pooling_type");
}

TEST(HParamRanges, SlidingWindowOfZeroIsRefused) {
    for (const char* arch : {"mistral", "gemma2", "gemma3"}) {
        const std::string a = arch;
        const std::string e = test::model_load_error_removing(with_key(a, a + ".attention.sliding_window", [&](GgufWriter& w) { w.add_uint32(a + ".attention.sliding_window", 0); }));
        expect_named(e, "metadata key '" + a + ".attention.sliding_window' = 0 is out of range");
    }
    // phi3 files write 0 for "no window" and the key is not applied there.
    EXPECT_EQ(test::model_load_error_removing(with_key("phi3", "phi3.attention.sliding_window", [](GgufWriter& w) { w.add_uint32("phi3.attention.sliding_window", 0); })), "");
}

TEST(HParamRanges, RopeScalingFactorsAreInRange) {
    const std::string key = "llama.rope.scaling.factor";
    expect_named(test::model_load_error_removing(with_key("llama-linear", key, [&](GgufWriter& w) { w.add_float32(key, 1e-30f); })),
                 "metadata key 'llama.rope.scaling.factor' = 1e-30 is out of range");
    expect_named(test::model_load_error_removing(with_key("llama-linear", key, [&](GgufWriter& w) { w.add_float32(key, 1e30f); })),
                 "metadata key 'llama.rope.scaling.factor' = 1e+30 is out of range");
    // A NaN key is refused in both Llama 3 variants: factors from metadata,
    // and factors in rope_freqs.weight (where the keys are otherwise unused).
    for (const char* arch : {"llama3-meta", "llama3"}) {
        for (const char* k : {"rope.scaling.factor", "rope.scaling.low_freq_factor", "rope.scaling.high_freq_factor"}) {
            const std::string full = std::string("llama.") + k;
            const std::string e = test::model_load_error_removing(with_key(arch, full, [&](GgufWriter& w) { w.add_float32(full, kNaN); }, [&](GgufWriter& w) {
                if (std::string(arch) == "llama3") w.add_string("llama.rope.scaling.type", "llama3");
            }));
            expect_named(e, "metadata key '" + full + "' = nan is not a finite number");
        }
    }
    const std::string ctx = "llama.rope.scaling.original_context_length";
    expect_named(test::model_load_error_removing(with_key("llama3-meta", ctx, [&](GgufWriter& w) { w.add_uint32(ctx, 0); })),
                 "metadata key '" + ctx + "' = 0 is out of range");
}

TEST(HParamRanges, RopeFreqsValuesAreInRange) {
    for (const float bad : {-1.f, 0.f, 1e38f, kNaN}) {
        const std::string path = temp_model("llama3");
        write_random_model(path, random_model_preset("tiny"), HETERO_DTYPE_F32, 3, "llama3");
        uint8_t bytes[4];
        std::memcpy(bytes, &bad, 4);
        test::patch_file(path, test::tensor_file_offset(path, "rope_freqs.weight") + 2 * 4, {bytes[0], bytes[1], bytes[2], bytes[3]});
        const std::string e = test::model_load_error_removing(path);
        expect_named(e, "tensor 'rope_freqs.weight' element 2 = ");
        expect_named(e, "is out of range");
    }
}

TEST(HParamRanges, BasesAndSoftcapsAreInRange) {
    expect_named(test::model_load_error_removing(with_key("llama", "llama.rope.freq_base", [](GgufWriter& w) { w.add_float32("llama.rope.freq_base", 1e38f); })),
                 "metadata key 'llama.rope.freq_base' = 1e+38 is out of range");
    expect_named(test::model_load_error_removing(with_key("gemma3", "gemma3.rope.freq_base_swa", [](GgufWriter& w) { w.add_float32("gemma3.rope.freq_base_swa", 1e-30f); })),
                 "metadata key 'gemma3.rope.freq_base_swa' = 1e-30 is out of range");
    for (const char* k : {"gemma2.attn_logit_softcapping", "gemma2.final_logit_softcapping"}) {
        const std::string key = k;
        expect_named(test::model_load_error_removing(with_key("gemma2", key, [&](GgufWriter& w) { w.add_float32(key, 1e-30f); })),
                     "metadata key '" + key + "' = 1e-30 is out of range");
    }
}

}  // namespace
}  // namespace hetero
