#include "packed_weights.hpp"

#include "kernels.hpp"

#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace hetero::cpu {
namespace {

// One group block: the 16 rows' scales, then 4-byte slices transposed.
void pack_group_block(const uint8_t* const* rows, uint64_t quant_bytes, bool offset_q8, uint8_t* out) {
    for (int64_t r = 0; r < kPackRows; ++r) std::memcpy(out + 2 * r, rows[r], 2);
    uint8_t* q = out + kPackScaleBytes;
    for (uint64_t i = 0; i < quant_bytes / 4; ++i)
        for (int64_t r = 0; r < kPackRows; ++r, q += 4) {
            std::memcpy(q, rows[r] + 2 + 4 * i, 4);
            if (offset_q8)
                for (int j = 0; j < 4; ++j) q[j] ^= 0x80;
        }
}

// One Q8_0 group block from 16 rows' Q5_0 or IQ4_NL blocks. Their values
// (Q5_0's q - 16 in [-16, 15], IQ4_NL's levels in [-127, 113]) are int8 as
// Q8_0 holds them, times the block's f16 scale as Q8_0's, so the packed Q8_0
// kernels run them exactly (streaming 34 bytes a block instead of 22 or 18,
// at the packed kernels' rate instead of the generic tile's).
void pack_as_q8_group_block(const uint8_t* const* rows, uint32_t dtype, uint8_t* out) {
    sdk::BlockQ8_0 q8[kPackRows];
    const uint8_t* q8_rows[kPackRows];
    for (int64_t r = 0; r < kPackRows; ++r) {
        std::memcpy(&q8[r].d, rows[r], 2);  // both formats start with the f16 scale
        if (dtype == HETERO_DTYPE_Q5_0) {
            sdk::BlockQ5_0 b;
            std::memcpy(&b, rows[r], sizeof b);
            for (int e = 0; e < 32; ++e) q8[r].qs[e] = int8_t(sdk::q5_value(b.qs, b.qh, e) - 16);
        } else {
            sdk::BlockIQ4_NL b;
            std::memcpy(&b, rows[r], sizeof b);
            for (int j = 0; j < 16; ++j) {
                q8[r].qs[j] = sdk::kIQ4NLValues[b.qs[j] & 0x0f];
                q8[r].qs[j + 16] = sdk::kIQ4NLValues[b.qs[j] >> 4];
            }
        }
        q8_rows[r] = reinterpret_cast<const uint8_t*>(&q8[r]);
    }
    pack_group_block(q8_rows, sizeof(sdk::BlockQ8_0) - 2, true, out);
}

// One Q4_K group super-block (kernels.hpp's layout) from 16 rows' blocks.
void pack_q4k_group_block(const uint8_t* const* rows, uint8_t* out) {
    for (int64_t r = 0; r < kPackRows; ++r) {
        const sdk::BlockQ4K* b = reinterpret_cast<const sdk::BlockQ4K*>(rows[r]);
        std::memcpy(out + 2 * r, &b->d, 2);
        std::memcpy(out + kPackScaleBytes + 2 * r, &b->dmin, 2);
        for (int j = 0; j < 8; ++j) {
            int sc, m;
            sdk::k_scale_min(b->scales, j, sc, m);
            out[kPackQ4KScalesAt + uint64_t(j * kPackRows + r)] = uint8_t(sc);
            out[kPackQ4KMinsAt + uint64_t(j * kPackRows + r)] = uint8_t(m);
        }
    }
    uint8_t* q = out + kPackQ4KQuantsAt;
    for (int p = 0; p < 4; ++p)
        for (int i = 0; i < 8; ++i)
            for (int64_t r = 0; r < kPackRows; ++r, q += 4)
                std::memcpy(q, reinterpret_cast<const sdk::BlockQ4K*>(rows[r])->qs + 32 * p + 4 * i, 4);
}

// One Q6_K group super-block (kernels.hpp's layout) from 16 rows' blocks.
void pack_q6k_group_block(const uint8_t* const* rows, uint8_t* out) {
    for (int64_t r = 0; r < kPackRows; ++r) {
        const auto* b = reinterpret_cast<const sdk::BlockQ6K*>(rows[r]);
        std::memcpy(out + kPackQ6KScaleAt + 2 * r, &b->d, 2);
        for (int g = 0; g < 16; ++g) out[kPackQ6KScalesAt + uint64_t(g * kPackRows + r)] = uint8_t(b->scales[g]);
    }
    uint8_t* lo = out + kPackQ6KLowAt;
    uint8_t* hi = out + kPackQ6KHighAt;
    for (int h = 0; h < 2; ++h) {
        for (int i = 0; i < 16; ++i)
            for (int64_t r = 0; r < kPackRows; ++r, lo += 4)
                std::memcpy(lo, reinterpret_cast<const sdk::BlockQ6K*>(rows[r])->ql + 64 * h + 4 * i, 4);
        for (int i = 0; i < 8; ++i)
            for (int64_t r = 0; r < kPackRows; ++r, hi += 4)
                std::memcpy(hi, reinterpret_cast<const sdk::BlockQ6K*>(rows[r])->qh + 32 * h + 4 * i, 4);
    }
}

// The packed copy replaces the source rows in every kernel of this provider,
// so their pages need not stay resident beside it (a CPU run would otherwise
// hold the weights twice). MADV_PAGEOUT never loses data: pages of the
// model's read-only file mapping are re-read from the file if anything (a
// tail row sharing the last page, another provider's upload) touches them
// again, and anonymous memory is swapped or simply kept. Only whole pages
// inside the range are given back.
void release_source_pages(const uint8_t* src, uint64_t bytes) {
#ifdef MADV_PAGEOUT
    const long page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0) return;
    const uintptr_t page = uintptr_t(page_size);
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(src) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(src) + bytes) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);  // advice: a refusal keeps the pages
#else
    (void)src;
    (void)bytes;
#endif
}

}  // namespace

std::shared_ptr<const PackedWeights> PackedWeightCache::get(const uint8_t* src, uint32_t dtype, int64_t m, int64_t k, ThreadPool& pool) {
    const int64_t rows = m / kPackRows * kPackRows;
    if (rows == 0) return nullptr;
    if (dtype != HETERO_DTYPE_Q4_0 && dtype != HETERO_DTYPE_Q8_0 && dtype != HETERO_DTYPE_Q5_0 && dtype != HETERO_DTYPE_IQ4_NL &&
        dtype != HETERO_DTYPE_Q4_K && dtype != HETERO_DTYPE_Q6_K)
        sdk::fail(HETERO_ERR_INTERNAL, "cpu: packing an unsupported dtype");
    std::lock_guard<std::mutex> lock(mutex_);
    const Key key{src, dtype, m, k};
    if (auto it = entries_.find(key); it != entries_.end())
        if (auto live = it->second.lock()) return live;

    const bool as_q8 = dtype == HETERO_DTYPE_Q5_0 || dtype == HETERO_DTYPE_IQ4_NL;  // packed into the Q8_0 layout
    const bool q8 = dtype == HETERO_DTYPE_Q8_0 || as_q8, q4k = dtype == HETERO_DTYPE_Q4_K, q6k = dtype == HETERO_DTYPE_Q6_K;
    const int64_t block_elems = q4k || q6k ? sdk::kKBlock : sdk::kQBlock;
    const uint64_t block_bytes = sdk::row_bytes(dtype, block_elems), quant_bytes = block_bytes - 2;
    const uint64_t group_block = q4k ? kPackGroupBlockQ4K : q6k ? kPackGroupBlockQ6K : q8 ? kPackGroupBlockQ8 : kPackGroupBlockQ4;
    const int64_t nb = k / block_elems, groups = rows / kPackRows;
    const uint64_t row_bytes = uint64_t(nb) * block_bytes;
    const uint64_t bytes = (uint64_t(groups) * uint64_t(nb) * group_block + 63) / 64 * 64;
    auto packed = std::make_shared<PackedWeights>();
    packed->data = HugePageBuffer(bytes);
    if (!packed->data.data()) sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "cpu: cannot allocate " + std::to_string(bytes) + " bytes of packed weights");
    packed->rows = rows;
    uint8_t* dst = packed->data.data();
    pool.parallel_for(groups, [&](int64_t g, int) {
        const uint8_t* row_ptr[kPackRows];
        for (int64_t b = 0; b < nb; ++b) {
            for (int64_t r = 0; r < kPackRows; ++r) row_ptr[r] = src + uint64_t(g * kPackRows + r) * row_bytes + uint64_t(b) * block_bytes;
            uint8_t* out = dst + (uint64_t(g) * uint64_t(nb) + uint64_t(b)) * group_block;
            if (q4k) pack_q4k_group_block(row_ptr, out);
            else if (q6k) pack_q6k_group_block(row_ptr, out);
            else if (as_q8) pack_as_q8_group_block(row_ptr, dtype, out);
            else pack_group_block(row_ptr, quant_bytes, q8, out);
        }
    });
    release_source_pages(src, uint64_t(rows) * row_bytes);
    entries_[key] = packed;
    // Drop entries whose executables are gone.
    for (auto it = entries_.begin(); it != entries_.end();) it = it->second.expired() ? entries_.erase(it) : std::next(it);
    return packed;
}

}  // namespace hetero::cpu
