// Builds GGUF v3 files: metadata of every type, arrays, and tensors placed at
// the file's alignment. Used by the converters and by tests that craft files
// (to_bytes() returns the exact file image, which tests may then corrupt).
// A tensor is either copied in when added, or deferred: its bytes are made
// when the file is written, one tensor at a time, so converting a model
// never holds more than one of its tensors in memory.
#pragma once

#include <hetero/model/gguf.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hetero {

class GgufWriter {
public:
    // Alignment of tensor data (power of two). A value other than 32 is also
    // recorded as the uint32 key general.alignment, as readers expect.
    void set_alignment(uint32_t alignment);

    void add_uint8(const std::string& key, uint8_t v);
    void add_int8(const std::string& key, int8_t v);
    void add_uint16(const std::string& key, uint16_t v);
    void add_int16(const std::string& key, int16_t v);
    void add_uint32(const std::string& key, uint32_t v);
    void add_int32(const std::string& key, int32_t v);
    void add_uint64(const std::string& key, uint64_t v);
    void add_int64(const std::string& key, int64_t v);
    void add_float32(const std::string& key, float v);
    void add_float64(const std::string& key, double v);
    void add_bool(const std::string& key, bool v);
    void add_string(const std::string& key, const std::string& v);

    void add_string_array(const std::string& key, const std::vector<std::string>& v);
    void add_float32_array(const std::string& key, const std::vector<float>& v);
    void add_int32_array(const std::string& key, const std::vector<int32_t>& v);
    // Any array of fixed-size elements: `count` elements of `elem_type` in `bytes`.
    void add_array(const std::string& key, GgufType elem_type, uint64_t count, const void* bytes);
    // Copies a value read from another file verbatim.
    void add_raw(const std::string& key, const GgufRawValue& value);

    // `ne` in ggml order (innermost first); `bytes` must match the type's layout.
    void add_tensor(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, const void* data,
                    uint64_t bytes);
    // Fills `out` (exactly the tensor's bytes) when the file is written; may throw.
    using TensorFill = std::function<void(uint8_t* out)>;
    // As add_tensor, with the data made by `fill` at write time.
    void add_tensor_deferred(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, uint64_t bytes,
                             TensorFill fill);

    std::vector<uint8_t> to_bytes() const;
    void write(const std::string& path) const;  // throws hetero::Error on I/O failure

private:
    struct Tensor {
        std::string name;
        uint32_t ggml_type;
        std::vector<int64_t> ne;
        uint64_t bytes;
        std::vector<uint8_t> data;  // empty for a deferred tensor
        TensorFill fill;            // set for a deferred tensor
    };
    void add_kv(const std::string& key, GgufType type, const void* value, uint64_t size);
    void check_tensor(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, uint64_t bytes) const;
    std::vector<uint8_t> header_bytes() const;  // everything before the first tensor's data
    // Hands the whole file image to `put` piece by piece; false once `put` failed.
    bool stream(const std::function<bool(const uint8_t*, uint64_t)>& put) const;

    uint32_t alignment_ = 32;
    uint64_t n_kv_ = 0;
    std::vector<uint8_t> kv_bytes_;  // encoded metadata entries
    std::vector<std::string> keys_;
    std::vector<Tensor> tensors_;
};

}  // namespace hetero
