// Anonymous memory for large read-mostly data (packed weights) that asks for
// 2 MiB pages without paying for them at the end. The mapping ends at the
// last 4 KiB page the data needs: a 2 MiB page is only ever placed where the
// whole of it lies inside the data, so the tail costs at most its own bytes
// (an allocation rounded up to 2 MiB wasted ~1 MiB per weight matrix, a
// quarter of a 1.1B model's packed copy).
#pragma once

#include <cstdint>

namespace hetero::cpu {

class HugePageBuffer {
public:
    HugePageBuffer() = default;
    // Throws nothing: data() is null when the memory cannot be mapped.
    explicit HugePageBuffer(uint64_t bytes);
    ~HugePageBuffer();
    HugePageBuffer(const HugePageBuffer&) = delete;
    HugePageBuffer& operator=(const HugePageBuffer&) = delete;
    HugePageBuffer(HugePageBuffer&& other) noexcept;
    HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;

    uint8_t* data() const { return data_; }

private:
    uint8_t* data_ = nullptr;
    uint64_t mapped_ = 0;
};

}  // namespace hetero::cpu
