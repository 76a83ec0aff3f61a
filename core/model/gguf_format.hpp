// Constants of the GGUF container shared by the reader and the writer
// (private to core/model).
#pragma once

#include <hetero/model/gguf.hpp>

#include <cstdint>

namespace hetero::gguf_format {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kWriteVersion = 3;
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint64_t kMaxAlignment = uint64_t(1) << 30;  // larger is surely corrupt
inline constexpr uint32_t kMaxDims = 4;
inline constexpr uint32_t kMaxType = uint32_t(GgufType::FLOAT64);
// Smallest possible encodings, used to reject counts the file cannot hold:
// key length (8) + type (4) + one value byte; name length (8) + n_dims (4) +
// one extent (8) + type (4) + offset (8).
inline constexpr uint64_t kMinKvBytes = 13;
inline constexpr uint64_t kMinTensorInfoBytes = 32;

// Bytes of one scalar value (not STRING or ARRAY).
inline uint64_t scalar_size(GgufType t) {
    switch (t) {
        case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
        case GgufType::UINT16: case GgufType::INT16: return 2;
        case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
        case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
        default: return 0;
    }
}

}  // namespace hetero::gguf_format
