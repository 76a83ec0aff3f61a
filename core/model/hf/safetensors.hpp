// Read-only, memory-mapped safetensors files (Hugging Face's weight format:
// an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the data). The constructor checks the
// whole header against the file before anything is used: a truncated or
// hostile file is a hetero::Error naming the file, the tensor and the
// problem, never a read outside the mapping.
#pragma once

#include "../mapped_file.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero::model_detail {

struct SafetensorsTensor {
    std::string name;
    std::string dtype;           // as the header spells it: "F32", "BF16", "I64", ...
    uint32_t elem_bytes = 0;     // bytes per element of that dtype
    std::vector<int64_t> shape;  // outermost first
    const uint8_t* data = nullptr;  // into the mapping; not aligned
    uint64_t bytes = 0;
};

class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string& path);

    const std::string& path() const { return file_->path(); }
    // In the order of their data in the file.
    const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
    const SafetensorsTensor* find(std::string_view name) const;
    // The header's "__metadata__" (string values only).
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

private:
    std::unique_ptr<MappedFile> file_;
    std::vector<SafetensorsTensor> tensors_;
    std::map<std::string, size_t, std::less<>> index_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace hetero::model_detail
