// Rows of one weight type re-encoded as another (through f32), spread over
// threads: the shared step of hetero quantize and hetero convert hf.
#pragma once

#include <cstdint>
#include <functional>

namespace hetero::model_detail {

// Calls work(first, last) on consecutive slices of [0, rows), on up to
// `threads` threads (<= 0: one per hardware thread), fewer when the
// tensor is small (`row_values` values per row). Returns when all are done;
// an exception in any slice is rethrown.
void parallel_rows(int64_t rows, int64_t row_values, int threads, const std::function<void(int64_t first, int64_t last)>& work);

// `rows` rows of `cols` values: from `src` (hetero_dtype `src_dtype`) to
// `dst` (`dst_dtype`, through encode_row_best); both row widths must hold
// whole blocks. The result does not depend on the thread count.
void reencode_rows(uint32_t src_dtype, const uint8_t* src, uint32_t dst_dtype, uint8_t* dst, int64_t rows, int64_t cols, int threads);

}  // namespace hetero::model_detail
