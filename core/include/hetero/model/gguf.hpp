// Read-only, memory-mapped access to GGUF files (versions 2 and 3).
//
// open() validates the whole header (metadata, tensor table, data ranges)
// against the file size before anything is used, so a hostile or truncated
// file yields a hetero::Error naming the file, the item and the byte offset,
// never a crash or a huge allocation. Tensor payloads are not copied: each
// GgufTensorInfo::data points into the mapping, which lives as long as the
// GgufFile object.
//
// Tensors of any ggml type with a known block layout are listed (including
// k-quants); whether a type can be used as a weight is decided by the model
// loader (load_model), which rejects unsupported types by name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

enum class GgufType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};

// Name of a metadata value type ("uint32", "array", ...), "?" when unknown.
const char* gguf_type_name(GgufType type);

struct GgufTensorInfo {
    std::string name;
    uint32_t ggml_type = 0;
    std::vector<int64_t> ne;  // ggml order: ne[0] is the innermost (contiguous) dimension
    uint64_t offset = 0;      // from the start of the data section
    uint64_t bytes = 0;
    const uint8_t* data = nullptr;  // into the mapping
};

// A metadata value exactly as stored: for scalars `count` is 1 and `bytes`
// covers the value (for a string: its 8-byte length and the characters); for
// arrays `elem_type` and `count` describe the elements and `bytes` covers
// them (after the array's own type and count fields).
struct GgufRawValue {
    GgufType type = GgufType::UINT8;
    GgufType elem_type = GgufType::UINT8;  // arrays only
    uint64_t count = 1;
    const uint8_t* bytes = nullptr;
    uint64_t size = 0;
};

class GgufFile {
public:
    // Maps the file read-only and validates everything; throws hetero::Error.
    static GgufFile open(const std::string& path);

    GgufFile(GgufFile&&) noexcept;
    GgufFile& operator=(GgufFile&&) noexcept;
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;
    ~GgufFile();

    uint32_t version() const;
    uint64_t alignment() const;
    uint64_t data_offset() const;  // file offset of the tensor data section

    bool has(std::string_view key) const;
    GgufType type_of(std::string_view key) const;  // throws if missing
    // For arrays: the element type; throws if missing or not an array.
    GgufType array_type_of(std::string_view key) const;
    uint64_t array_size(std::string_view key) const;  // throws if missing or not an array

    // Scalars: nullopt when the key is missing, hetero::Error when the value
    // has an incompatible type or does not fit.
    std::optional<uint64_t> get_uint(std::string_view key) const;  // any integer type (negative -> error)
    std::optional<int64_t> get_int(std::string_view key) const;    // any integer type
    std::optional<double> get_float(std::string_view key) const;   // float32/float64 and integers
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string> get_string(std::string_view key) const;

    // Arrays: empty when the key is missing, hetero::Error on a wrong type.
    std::vector<std::string> get_string_array(std::string_view key) const;
    std::vector<float> get_float_array(std::string_view key) const;  // float32/float64 elements
    std::vector<int32_t> get_int_array(std::string_view key) const;  // integer elements that fit int32

    std::vector<std::string> keys() const;  // in file order
    GgufRawValue raw_value(std::string_view key) const;  // throws if missing
    const std::vector<GgufTensorInfo>& tensors() const;
    const GgufTensorInfo* find_tensor(std::string_view name) const;  // nullptr if absent
    const std::string& path() const;

    // The whole mapped file (for zero-copy consumers that keep the GgufFile alive).
    const uint8_t* mapped_data() const;
    uint64_t mapped_size() const;

    struct Impl;

private:
    explicit GgufFile(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace hetero
