#include "npu_outliers.hpp"

#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace hetero::npu {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "hetero npu_emu channel ranges 1";

std::string ranges_file(const std::string& dir, uint64_t key) {
    char name[64];
    std::snprintf(name, sizeof name, "%016llx.ranges", static_cast<unsigned long long>(key));
    return (fs::path(dir) / "outliers" / name).string();
}

}  // namespace

void ChannelRanges::observe(const float* x, int64_t n, int64_t k) {
    if (channel_max.empty()) channel_max.assign(size_t(k), 0.0f);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < k; ++c) channel_max[size_t(c)] = std::max(channel_max[size_t(c)], std::fabs(x[i * k + c]));
    rows += n;
}

void ChannelRanges::merge(const ChannelRanges& o) {
    if (channel_max.empty()) channel_max.assign(o.channel_max.size(), 0.0f);
    for (size_t c = 0; c < std::min(channel_max.size(), o.channel_max.size()); ++c) channel_max[c] = std::max(channel_max[c], o.channel_max[c]);
    rows += o.rows;
}

std::optional<ChannelRanges> load_ranges(const std::string& dir, uint64_t key, int64_t k, std::string& warning) {
    if (dir.empty()) return std::nullopt;
    const std::string path = ranges_file(dir, key);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream in(path);
    std::string magic;
    std::getline(in, magic);
    ChannelRanges r;
    int64_t file_k = -1;
    in >> file_k >> r.rows;
    bool ok = magic == kMagic && file_k == k && r.rows > 0;
    if (ok) {
        r.channel_max.resize(size_t(k));
        for (int64_t c = 0; c < k && ok; ++c) {
            std::string v;
            in >> v;
            char* end = nullptr;
            const float f = std::strtof(v.c_str(), &end);
            ok = !v.empty() && end && *end == '\0' && std::isfinite(f) && f >= 0.0f;
            r.channel_max[size_t(c)] = f;
        }
    }
    if (!ok) {
        warning = "npu_emu: ignoring corrupt or mismatched outlier calibration " + path + " (run hetero calibrate again)";
        return std::nullopt;
    }
    return r;
}

void save_ranges(const std::string& dir, uint64_t key, const ChannelRanges& r) {
    if (dir.empty() || r.rows == 0) return;
    ChannelRanges merged = r;
    std::string ignored;
    if (auto old = load_ranges(dir, key, int64_t(r.channel_max.size()), ignored)) merged.merge(*old);
    std::error_code ec;
    const std::string path = ranges_file(dir, key);
    fs::create_directories(fs::path(path).parent_path(), ec);
    // Written beside its name, then renamed: a reader never sees half a record.
    std::string text = std::string(kMagic) + "\n" + std::to_string(merged.channel_max.size()) + " " + std::to_string(merged.rows) + "\n";
    char buf[32];
    for (float f : merged.channel_max) {
        std::snprintf(buf, sizeof buf, "%a\n", double(f));
        text += buf;
    }
    sdk::write_file_atomically(path, text);
}

float outlier_threshold(const ChannelRanges& r, double quantile) {
    std::vector<float> v = r.channel_max;
    if (v.empty()) return 0.0f;
    std::sort(v.begin(), v.end());
    return v[size_t(std::floor(std::clamp(quantile, 0.0, 1.0) * double(v.size() - 1)))];
}

ShadowWeights::ShadowWeights(const hetero_tensor_desc& w, const uint8_t* data, float threshold, const ChannelRanges& ranges)
    : desc_(w), data_(data), threshold_(threshold), rows_(w.shape[0]), k_(sdk::row_width(w)) {
    columns_.resize(size_t(k_));
    std::vector<int64_t> hot;
    for (int64_t c = 0; c < k_ && c < int64_t(ranges.channel_max.size()); ++c)
        if (ranges.channel_max[size_t(c)] > threshold_) hot.push_back(c);
    load(hot);
}

size_t ShadowWeights::hot_channels() const {
    std::lock_guard<std::mutex> lock(mu_);
    return size_t(std::count_if(columns_.begin(), columns_.end(), [](const auto& c) { return !c.empty(); }));
}

uint64_t ShadowWeights::bytes() const { return uint64_t(hot_channels()) * uint64_t(rows_) * 4; }

void ShadowWeights::load(const std::vector<int64_t>& channels) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> missing;
    for (int64_t c : channels)
        if (columns_[size_t(c)].empty()) missing.push_back(c);
    if (missing.empty()) return;
    for (int64_t c : missing) columns_[size_t(c)].resize(size_t(rows_));
    // Each row dequantised once for all missing channels (rows are stored
    // whole: blocks of 32 for Q8_0/Q4_0).
    const uint64_t row_bytes = sdk::row_bytes(desc_.dtype, k_);
    std::vector<float> row(static_cast<size_t>(k_));
    for (int64_t r = 0; r < rows_; ++r) {
        sdk::row_to_f32(desc_.dtype, data_ + uint64_t(r) * row_bytes, row.data(), k_);
        for (int64_t c : missing) columns_[size_t(c)][size_t(r)] = row[size_t(c)];
    }
}

ShadowResult matmul_shadow(const float* x, int64_t n, const Int8Weights& w, ShadowWeights& shadow, std::vector<int8_t>& qx, float* y) {
    const int64_t k = w.k, m = w.rows;
    float amax = 0.0f;
    for (int64_t i = 0; i < n * k; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float t = std::min(shadow.threshold(), amax);
    const float s = t / 127.0f;
    qx.resize(size_t(n * k));
    for (int64_t i = 0; i < n * k; ++i) qx[size_t(i)] = quantize_value(std::clamp(x[i], -t, t), s);
    matmul_w8a8(qx.data(), s, n, w, y);
    ShadowResult res;
    if (amax <= t) return res;
    std::vector<int64_t> channels;
    for (int64_t c = 0; c < k; ++c) {
        bool outlier = false;
        for (int64_t i = 0; i < n && !outlier; ++i) outlier = std::fabs(x[i * k + c]) > t;
        if (outlier) channels.push_back(c);
    }
    res.outlier_channels = int64_t(channels.size());
    shadow.load(channels);
    std::vector<float> acc(size_t(n * m), 0.0f);
    for (int64_t c : channels) {
        const float* col = shadow.column(c);
        for (int64_t i = 0; i < n; ++i) {
            const float v = x[i * k + c];
            const float beyond = v - std::clamp(v, -t, t);
            if (beyond == 0.0f) continue;
            float* a = acc.data() + i * m;
            for (int64_t r = 0; r < m; ++r) a[r] += beyond * col[r];
        }
    }
    for (int64_t i = 0; i < n * m; ++i) y[i] += acc[size_t(i)];
    return res;
}

void matmul_f32(const float* x, int64_t n, const hetero_tensor_desc& w, const uint8_t* data, float* y) {
    const int64_t m = w.shape[0], k = sdk::row_width(w);
    const uint64_t row_bytes = sdk::row_bytes(w.dtype, k);
    std::vector<float> wr(static_cast<size_t>(k));
    for (int64_t r = 0; r < m; ++r) {
        sdk::row_to_f32(w.dtype, data + uint64_t(r) * row_bytes, wr.data(), k);
        for (int64_t i = 0; i < n; ++i) {
            float acc = 0.0f;
            for (int64_t c = 0; c < k; ++c) acc += x[i * k + c] * wr[size_t(c)];
            y[i * m + r] = acc;
        }
    }
}

}  // namespace hetero::npu
