// A tensor's type and shape must account for all the bytes written for it:
// the data of each runs to the next tensor (or the end of the file) but for
// the alignment padding. A tensor retyped to a smaller block type, or given
// fewer rows, is refused naming the tensor, its type, shape and both byte
// counts, where it used to run with garbage output.
#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>

#include <gtest/gtest.h>

#include "gguf_edit.hpp"
#include "error_message.hpp"
#include "test_data.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace hetero {
namespace {

namespace fs = std::filesystem;

std::string temp_model(const std::string& name) { return test::temp_path("tensor_extent_" + name + ".gguf").string(); }

// File offset of tensor `name`'s info: its dimension count follows the name.
uint64_t tensor_info_offset(const std::string& path, const std::string& name) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string needle(8, '\0');
    const uint64_t len = name.size();
    std::memcpy(needle.data(), &len, 8);
    needle += name;
    const size_t at = bytes.find(needle);
    if (at == std::string::npos) throw std::runtime_error(path + ": no tensor info for " + name);
    return at + needle.size();
}

// Rewrites tensor `name`'s ggml type, or its outermost extent when `rows` > 0.
void retype(const std::string& path, const std::string& name, uint32_t ggml_type, uint64_t rows = 0) {
    const uint64_t dims_at = tensor_info_offset(path, name);
    const uint32_t n_dims = 2;
    const uint64_t type_at = dims_at + 4 + 8 * n_dims;
    if (rows) {
        std::vector<uint8_t> b(8);
        std::memcpy(b.data(), &rows, 8);
        test::patch_file(path, dims_at + 4 + 8 * (n_dims - 1), b);
        return;
    }
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &ggml_type, 4);
    test::patch_file(path, type_at, b);
}

TEST(TensorExtent, GeneratedFilesHaveNoGaps) {
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q6_K}) {
        const std::string path = temp_model("ok");
        write_random_model(path, random_model_preset("tiny-k"), dtype, 5);
        EXPECT_EQ(test::gguf_open_error(path), "") << dtype;
        fs::remove(path);
    }
}

TEST(TensorExtent, RetypedToASmallerBlockTypeIsRefused) {
    struct Case {
        uint32_t written, claimed;
        const char* claimed_name;
        std::string tensor, next;
    };
    // 256 x 512 of Q4_K is 73728 bytes, of Q3_K 56320, of Q2_K 43008; Q6_K
    // (107520) as Q5_K (90112); the last tensor (output.weight) against the file's end.
    const std::vector<Case> cases = {
        {HETERO_DTYPE_Q4_K, GGML_TYPE_ID_Q3_K, "q3_K", "blk.0.ffn_up.weight", "the next tensor 'blk.0.ffn_down.weight'"},
        {HETERO_DTYPE_Q4_K, GGML_TYPE_ID_Q2_K, "q2_K", "blk.1.attn_q.weight", "the next tensor 'blk.1.attn_k.weight'"},
        {HETERO_DTYPE_Q6_K, GGML_TYPE_ID_Q5_K, "q5_K", "output.weight", "the end of the file"},
        {HETERO_DTYPE_Q8_0, GGML_TYPE_ID_Q4_0, "q4_0", "blk.1.ffn_gate.weight", "the next tensor 'blk.1.ffn_up.weight'"},
    };
    for (const Case& c : cases) {
        const std::string path = temp_model("retyped");
        write_random_model(path, random_model_preset("tiny-k"), c.written, 5);
        const GgufFile before = GgufFile::open(path);
        const GgufTensorInfo& t = *before.find_tensor(c.tensor);
        const uint64_t written_bytes = t.bytes;
        const std::string shape = "[" + std::to_string(t.ne[1]) + ", " + std::to_string(t.ne[0]) + "]";
        retype(path, c.tensor, c.claimed);
        const std::string e = test::gguf_open_error(path);
        EXPECT_NE(e.find("tensor '" + c.tensor + "' of type " + c.claimed_name + " and shape " + shape + " should hold "), std::string::npos)
            << c.tensor << ": " << (e.empty() ? "(opened)" : e);
        EXPECT_NE(e.find(std::to_string(written_bytes) + " bytes lie before " + c.next), std::string::npos) << e;
        // The model loader sees the same refusal.
        try {
            load_model(path);
            ADD_FAILURE() << c.tensor << " retyped to " << c.claimed_name << " loaded";
        } catch (const Error& x) {
            EXPECT_NE(std::string(x.what()).find("should hold"), std::string::npos) << x.what();
        }
        fs::remove(path);
    }
}

TEST(TensorExtent, FewerRowsThanWrittenIsRefused) {
    const std::string path = temp_model("rows");
    write_random_model(path, random_model_preset("tiny-k"), HETERO_DTYPE_Q4_K, 5);
    retype(path, "blk.0.attn_output.weight", 0, 255);
    const std::string e = test::gguf_open_error(path);
    EXPECT_NE(e.find("tensor 'blk.0.attn_output.weight' of type q4_K and shape [255, 256] should hold 36720 bytes, but 36864 bytes lie before"),
              std::string::npos)
        << e;
    fs::remove(path);
}

}  // namespace
}  // namespace hetero
