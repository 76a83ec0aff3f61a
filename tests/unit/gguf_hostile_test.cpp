// Hostile GGUF inputs: every truncation and extreme values in every header
// field must give a hetero::Error (run under ASan/UBSan too), never a crash
// or a huge allocation.
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/model.hpp>

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace hetero {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

std::string temp_path(const std::string& name) { return test::temp_path("gguf_hostile_" + name).string(); }

void write_file(const std::string& path, const Bytes& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// A small valid file with every kind of entry. The last tensor's size is a
// multiple of the alignment, so no byte of the file is optional.
Bytes valid_image() {
    GgufWriter w;
    w.add_string("general.architecture", "test");
    w.add_uint32("count", 7);
    w.add_string_array("words", {"alpha", "beta", "gamma"});
    w.add_float32_array("floats", {1.f, 2.f, 3.f});
    w.add_bool("flag", true);
    std::vector<uint8_t> q8(34, 1);
    w.add_tensor("quant", GGML_TYPE_ID_Q8_0, {32}, q8.data(), q8.size());
    std::vector<float> f(16, 0.5f);
    w.add_tensor("dense", GGML_TYPE_ID_F32, {8, 2}, f.data(), f.size() * 4);
    return w.to_bytes();
}

// Offset of the first occurrence of `s` in `b` (the tests use unique names).
size_t find(const Bytes& b, const std::string& s) {
    auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
    if (it == b.end()) throw std::runtime_error("marker not found: " + s);
    return size_t(it - b.begin());
}

template <class T>
Bytes patched(Bytes b, size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(T));
    return b;
}

// Opens the image and expects a hetero::Error whose message contains `needle`.
void expect_rejected(const Bytes& image, const std::string& needle, const std::string& label) {
    const std::string path = temp_path("case.gguf");
    write_file(path, image);
    try {
        GgufFile::open(path);
        ADD_FAILURE() << label << ": accepted";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path), std::string::npos) << label << ": message does not name the file: " << msg;
        EXPECT_NE(msg.find(needle), std::string::npos) << label << ": '" << msg << "' lacks '" << needle << "'";
    }
    fs::remove(path);
}

TEST(GgufHostile, ValidImageOpens) {
    const std::string path = temp_path("valid.gguf");
    write_file(path, valid_image());
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.tensors().size(), 2u);
    EXPECT_EQ(f.get_string_array("words").size(), 3u);
    fs::remove(path);
}

TEST(GgufHostile, EveryTruncationIsAnError) {
    const Bytes full = valid_image();
    const std::string path = temp_path("trunc.gguf");
    for (size_t n = 0; n < full.size(); ++n) {
        write_file(path, Bytes(full.begin(), full.begin() + std::ptrdiff_t(n)));
        EXPECT_THROW(GgufFile::open(path), Error) << "prefix of " << n << " bytes";
        EXPECT_THROW(load_model(path), Error) << "prefix of " << n << " bytes";
    }
    fs::remove(path);
}

TEST(GgufHostile, EmptyAndForeignFiles) {
    expect_rejected({}, "empty", "zero-byte file");
    expect_rejected({'G', 'G', 'U'}, "not a GGUF", "three bytes");
    const std::string text = "hello, this is not a model file at all";
    expect_rejected(Bytes(text.begin(), text.end()), "not a GGUF", "text file");
    EXPECT_THROW(GgufFile::open(temp_path("does-not-exist.gguf")), Error);
    EXPECT_THROW(GgufFile::open(fs::temp_directory_path().string()), Error);  // a directory
}

TEST(GgufHostile, Versions) {
    const Bytes b = valid_image();
    expect_rejected(patched<uint32_t>(b, 4, 1), "version 1 is not supported", "v1");
    expect_rejected(patched<uint32_t>(b, 4, 4), "unsupported GGUF version 4", "v4");
    expect_rejected(patched<uint32_t>(b, 4, 0x03000000u), "big-endian", "byte-swapped");
    // Version 2 has the same layout and is accepted.
    const std::string path = temp_path("v2.gguf");
    write_file(path, patched<uint32_t>(b, 4, 2));
    EXPECT_EQ(GgufFile::open(path).version(), 2u);
    fs::remove(path);
}

TEST(GgufHostile, HeaderCounts) {
    const Bytes b = valid_image();
    for (uint64_t n : {uint64_t(1) << 40, std::numeric_limits<uint64_t>::max(), uint64_t(1000)}) {
        expect_rejected(patched<uint64_t>(b, 8, n), "tensor", "tensor count " + std::to_string(n));
        expect_rejected(patched<uint64_t>(b, 16, n), "metadata", "metadata count " + std::to_string(n));
    }
    // One entry fewer: the parser then reads tensor info as metadata and must fail cleanly.
    expect_rejected(patched<uint64_t>(b, 16, 4), "at byte", "metadata count one short");
    expect_rejected(patched<uint64_t>(b, 8, 3), "at byte", "tensor count one more");
}

TEST(GgufHostile, MetadataFields) {
    const Bytes b = valid_image();
    const size_t count_key = find(b, "count");
    for (uint64_t len : {std::numeric_limits<uint64_t>::max(), uint64_t(1) << 62, uint64_t(b.size())})
        expect_rejected(patched<uint64_t>(b, count_key - 8, len), "length", "key length " + std::to_string(len));
    const size_t count_type = count_key + 5;
    for (uint32_t t : {13u, 0xffffffffu, 1000u})
        expect_rejected(patched<uint32_t>(b, count_type, t), "unknown value type", "value type " + std::to_string(t));

    const size_t arch_value = find(b, "general.architecture") + 20 + 4;  // after key and type: string length
    expect_rejected(patched<uint64_t>(b, arch_value, std::numeric_limits<uint64_t>::max()), "length", "string length");

    const size_t words = find(b, "words") + 5 + 4;  // array element type
    expect_rejected(patched<uint32_t>(b, words, uint32_t(GgufType::ARRAY)), "nested arrays", "nested array");
    expect_rejected(patched<uint32_t>(b, words, 77), "unknown array element type", "array element type");
    for (uint64_t n : {std::numeric_limits<uint64_t>::max(), uint64_t(1) << 61, uint64_t(1000)})
        expect_rejected(patched<uint64_t>(b, words + 4, n), "strings", "string array length " + std::to_string(n));
    expect_rejected(patched<uint64_t>(b, find(b, "alpha") - 8, uint64_t(1) << 63), "length", "array string length");

    const size_t floats = find(b, "floats") + 6 + 4;
    for (uint64_t n : {std::numeric_limits<uint64_t>::max(), uint64_t(1) << 62, uint64_t(1) << 40})
        expect_rejected(patched<uint64_t>(b, floats + 4, n), "elements", "float array length " + std::to_string(n));

    // Renaming "count" to "flag" makes a duplicate key.
    Bytes dup = b;
    std::memcpy(dup.data() + count_key, "flag", 4);
    dup = patched<uint64_t>(dup, count_key - 8, 4);
    expect_rejected(dup, "at byte", "duplicate key (shifted)");
}

TEST(GgufHostile, DuplicateKeyAndTensor) {
    GgufWriter w;
    w.add_uint32("aaaa", 1);
    w.add_uint32("bbbb", 2);
    const std::vector<float> f(8, 1.f);
    w.add_tensor("t_one", GGML_TYPE_ID_F32, {8}, f.data(), 32);
    w.add_tensor("t_two", GGML_TYPE_ID_F32, {8}, f.data(), 32);
    Bytes b = w.to_bytes();
    Bytes dup_key = b;
    std::memcpy(dup_key.data() + find(b, "bbbb"), "aaaa", 4);
    expect_rejected(dup_key, "appears twice", "duplicate key");
    Bytes dup_tensor = b;
    std::memcpy(dup_tensor.data() + find(b, "t_two"), "t_one", 5);
    expect_rejected(dup_tensor, "appears twice", "duplicate tensor");
}

TEST(GgufHostile, TensorInfoFields) {
    const Bytes b = valid_image();
    const size_t dense = find(b, "dense") + 5;  // n_dims
    const size_t ne0 = dense + 4, ne1 = ne0 + 8, type = ne1 + 8, offset = type + 4;
    for (uint32_t d : {0u, 5u, 0xffffffffu})
        expect_rejected(patched<uint32_t>(b, dense, d), "dimensions", "n_dims " + std::to_string(d));
    expect_rejected(patched<uint64_t>(b, ne0, 0), "invalid extent", "zero extent");
    expect_rejected(patched<uint64_t>(b, ne0, std::numeric_limits<uint64_t>::max()), "invalid extent", "extent -1");
    expect_rejected(patched<uint64_t>(patched<uint64_t>(b, ne0, uint64_t(1) << 40), ne1, uint64_t(1) << 40), "overflows",
                    "element count overflow");
    expect_rejected(patched<uint64_t>(b, ne1, uint64_t(1) << 40), "outside the data section", "huge tensor");
    for (uint32_t t : {4u, 99u, 0xffffffffu})
        expect_rejected(patched<uint32_t>(b, type, t), "unknown ggml type", "ggml type " + std::to_string(t));
    expect_rejected(patched<uint32_t>(b, type, 8), "not a multiple", "q8_0 with 8 columns");
    expect_rejected(patched<uint64_t>(b, offset, 1), "alignment", "misaligned offset");
    expect_rejected(patched<uint64_t>(b, offset, std::numeric_limits<uint64_t>::max() - 31), "outside the data section",
                    "offset near 2^64");
    expect_rejected(patched<uint64_t>(b, offset, uint64_t(1) << 40), "outside the data section", "offset 2^40");
    expect_rejected(patched<uint64_t>(b, offset, 0), "overlap", "overlapping tensors");
    expect_rejected(patched<uint64_t>(b, find(b, "quant") - 8, std::numeric_limits<uint64_t>::max()), "length",
                    "tensor name length");
    expect_rejected(patched<uint64_t>(b, find(b, "quant") - 8, 0), "at byte", "empty tensor name");
}

TEST(GgufHostile, Alignment) {
    auto image = [](auto add) {
        GgufWriter w;
        add(w);
        const std::vector<float> f(8, 1.f);
        w.add_tensor("t", GGML_TYPE_ID_F32, {8}, f.data(), 32);
        return w.to_bytes();
    };
    expect_rejected(image([](GgufWriter& w) { w.add_uint32("general.alignment", 0); }), "power of two", "alignment 0");
    expect_rejected(image([](GgufWriter& w) { w.add_uint32("general.alignment", 48); }), "power of two", "alignment 48");
    expect_rejected(image([](GgufWriter& w) { w.add_uint64("general.alignment", uint64_t(1) << 62); }), "power of two",
                    "alignment 2^62");
    expect_rejected(image([](GgufWriter& w) { w.add_int32("general.alignment", -32); }), "power of two",
                    "negative alignment");
    expect_rejected(image([](GgufWriter& w) { w.add_string("general.alignment", "32"); }), "general.alignment",
                    "string alignment");
    // A valid but large alignment pushes the data section past the end of the file.
    expect_rejected(image([](GgufWriter& w) { w.add_uint32("general.alignment", 1u << 20); }), "data section",
                    "alignment beyond the file");
}

TEST(GgufHostile, RandomCorruptionNeverCrashes) {
    // Deterministic byte flips over the header region: each result either
    // opens (a harmless change) or throws hetero::Error.
    const Bytes b = valid_image();
    const std::string path = temp_path("flip.gguf");
    uint64_t state = 12345;
    size_t rejected = 0;
    for (int i = 0; i < 1000; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        Bytes c = b;
        const size_t at = size_t(state >> 33) % 300;  // header, metadata and tensor infos
        c[at] = uint8_t(state >> 13);
        write_file(path, c);
        try {
            GgufFile::open(path);
        } catch (const Error&) {
            ++rejected;
        }
    }
    EXPECT_GT(rejected, 50u);
    fs::remove(path);
}

}  // namespace
}  // namespace hetero
