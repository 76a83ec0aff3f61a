// Every quantized block's f16 scales are checked at load: a NaN or Inf scale
// in a block the value sampler skips (a late block of a matrix) is a load
// error naming the tensor, its type and the block, for every block type.
// Without it the CPU provider's int8-activation kernels turned the damage
// into finite garbage and printed "<unk>" tokens with exit status 0.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>

#include <gtest/gtest.h>

#include "gguf_edit.hpp"
#include "error_message.hpp"
#include "test_data.hpp"

#include <unistd.h>

#include <filesystem>
#include <set>

namespace hetero {
namespace {

namespace fs = std::filesystem;

// A block type as GGUF lays it out: bytes per block and where its f16 scales sit.
struct BlockType {
    uint32_t dtype;
    const char* name;
    uint64_t block_bytes;
    std::vector<uint64_t> scale_offsets;  // d, then the min scale where there is one
};

const std::vector<BlockType> kBlockTypes = {
    {HETERO_DTYPE_Q8_0, "q8_0", 34, {0}},        {HETERO_DTYPE_Q4_0, "q4_0", 18, {0}},
    {HETERO_DTYPE_Q4_1, "q4_1", 20, {0, 2}},     {HETERO_DTYPE_Q5_0, "q5_0", 22, {0}},
    {HETERO_DTYPE_Q5_1, "q5_1", 24, {0, 2}},     {HETERO_DTYPE_IQ4_NL, "iq4_nl", 18, {0}},
    {HETERO_DTYPE_Q2_K, "q2_K", 84, {80, 82}},   {HETERO_DTYPE_Q3_K, "q3_K", 110, {108}},
    {HETERO_DTYPE_Q4_K, "q4_K", 144, {0, 2}},    {HETERO_DTYPE_Q5_K, "q5_K", 176, {0, 2}},
    {HETERO_DTYPE_Q6_K, "q6_K", 210, {208}},
};

std::string temp_model(const std::string& name) { return test::temp_path("block_scale_" + name + ".gguf").string(); }

// The last block of `blocks` that the value sampler (64 blocks spread over a
// matrix, see core/model/value_checks.cpp) does not read.
uint64_t unsampled_late_block(uint64_t blocks) {
    std::set<uint64_t> sampled;
    for (uint64_t s = 0; s < 64; ++s) sampled.insert(s * (blocks - 1) / 63);
    for (uint64_t b = blocks; b-- > 0;)
        if (!sampled.count(b)) return b;
    return 0;
}

TEST(BlockScales, NonFiniteScaleInAnUnsampledBlockIsALoadError) {
    const std::string tensor = "blk.1.ffn_down.weight";
    for (const BlockType& t : kBlockTypes) {
        const std::string path = temp_model(t.name);
        write_random_model(path, random_model_preset("tiny-k"), t.dtype, 7);
        EXPECT_EQ(test::model_load_error(path), "") << t.name << ": the undamaged file must load";
        const GgufFile f = GgufFile::open(path);
        const GgufTensorInfo& info = *f.find_tensor(tensor);
        const uint64_t blocks = info.bytes / t.block_bytes;
        ASSERT_GT(blocks, 64u) << t.name << ": the matrix must be larger than the sample";
        const uint64_t block = unsampled_late_block(blocks);
        ASSERT_GT(block, blocks / 2) << t.name;
        const uint64_t at = f.data_offset() + info.offset + block * t.block_bytes;
        // NaN and +-Inf, in the scale and (where the type has one) the min scale.
        const std::vector<std::pair<uint16_t, const char*>> values = {{0x7e00, "nan"}, {0x7c00, "inf"}, {0xfc00, "-inf"}};
        for (size_t field = 0; field < t.scale_offsets.size(); ++field) {
            for (const auto& [bits, shown] : values) {
                const std::string damaged = temp_model(std::string(t.name) + "_damaged");
                fs::copy_file(path, damaged, fs::copy_options::overwrite_existing);
                test::patch_file(damaged, at + t.scale_offsets[field], {uint8_t(bits & 0xff), uint8_t(bits >> 8)});
                const std::string e = test::model_load_error(damaged);
                const std::string expected = "tensor '" + tensor + "' (" + t.name + ") block " + std::to_string(block) + " of " +
                                             std::to_string(blocks) + " has a non-finite scale";
                EXPECT_NE(e.find(expected), std::string::npos) << t.name << " field " << field << " = " << shown << ": " << e;
                EXPECT_NE(e.find(damaged), std::string::npos) << e;
                EXPECT_NE(e.find(shown), std::string::npos) << e;
                fs::remove(damaged);
            }
        }
        fs::remove(path);
    }
}

}  // namespace
}  // namespace hetero
