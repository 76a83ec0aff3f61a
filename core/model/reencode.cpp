#include "reencode.hpp"

#include "quant_search.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hetero::model_detail {

void parallel_rows(int64_t rows, int64_t row_values, int threads, const std::function<void(int64_t, int64_t)>& work) {
    int n = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
    // Threads only pay off on large tensors: at least 64k values each.
    n = int(std::clamp<int64_t>(rows * std::max<int64_t>(row_values, 1) / 65536, 1, n));
    if (n == 1) {
        work(0, rows);
        return;
    }
    std::vector<std::thread> pool;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const int64_t per = (rows + n - 1) / n;
    for (int t = 0; t < n; ++t) {
        const int64_t first = std::min(rows, per * t), last = std::min(rows, per * (t + 1));
        if (first >= last) continue;
        pool.emplace_back([&, first, last] {
            try {
                work(first, last);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
            }
        });
    }
    for (std::thread& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
}

void reencode_rows(uint32_t src_dtype, const uint8_t* src, uint32_t dst_dtype, uint8_t* dst, int64_t rows, int64_t cols, int threads) {
    const uint64_t in_row = sdk::row_bytes(src_dtype, cols), out_row = sdk::row_bytes(dst_dtype, cols);
    parallel_rows(rows, cols, threads, [&](int64_t first, int64_t last) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = first; r < last; ++r) {
            sdk::row_to_f32(src_dtype, src + in_row * uint64_t(r), row.data(), cols);
            encode_row_best(dst_dtype, row.data(), dst + out_row * uint64_t(r), cols);
        }
    });
}

}  // namespace hetero::model_detail
