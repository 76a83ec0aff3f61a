// A read-only memory mapping of a whole file (private to core/model).
#pragma once

#include <cstdint>
#include <string>

namespace hetero::model_detail {

class MappedFile {
public:
    // Maps `path` read-only; throws hetero::Error naming the file on failure.
    // An empty file maps to size 0 and a null pointer.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace hetero::model_detail
