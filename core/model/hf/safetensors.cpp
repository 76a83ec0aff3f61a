#include "safetensors.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/json_strict.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace hetero::model_detail {

namespace {

// The safetensors library's own limit on the JSON header.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
// Far above any real tensor, and keeps products of extents from overflowing.
constexpr uint64_t kMaxElements = 1ull << 48;
constexpr size_t kMaxRank = 8;

// Bytes per element of every dtype the safetensors format defines.
uint32_t elem_bytes_of(const std::string& dtype) {
    static const std::map<std::string, uint32_t, std::less<>> sizes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1}, {"I16", 2}, {"U16", 2},
        {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4},     {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8},
    };
    const auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

uint64_t read_u64_le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(std::make_unique<MappedFile>(path)) {
    const uint64_t size = file_->size();
    if (size < 8) throw Error(fmt::format("{}: {} bytes: too short for a safetensors file (an 8-byte header length comes first)", path, size));
    const uint64_t header_len = read_u64_le(file_->data());
    if (header_len < 2 || header_len > kMaxHeaderBytes)
        throw Error(fmt::format("{}: header length {} is out of range (2 .. {} bytes): not a safetensors file", path, header_len, kMaxHeaderBytes));
    if (header_len > size - 8)
        throw Error(fmt::format("{}: header length {} runs past the end of the file ({} bytes): truncated?", path, header_len, size));
    const std::string header(reinterpret_cast<const char*>(file_->data() + 8), size_t(header_len));
    nlohmann::json j;
    try {
        j = sdk::parse_json_strict(header, path + ": header");
    } catch (const sdk::JsonError& e) {
        throw Error(e.what());
    }
    if (!j.is_object()) throw Error(fmt::format("{}: header is not a JSON object", path));

    const uint64_t data_start = 8 + header_len, data_size = size - data_start;
    const uint8_t* data = file_->data() + data_start;
    struct Range {
        uint64_t begin, end;
        size_t tensor;
    };
    std::vector<Range> ranges;
    for (const auto& [name, entry] : j.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object()) throw Error(fmt::format("{}: header '__metadata__' is not an object", path));
            for (const auto& [k, v] : entry.items()) {
                if (!v.is_string()) throw Error(fmt::format("{}: header '__metadata__.{}' is not a string", path, k));
                metadata_[k] = v.get<std::string>();
            }
            continue;
        }
        const std::string& tensor = name;  // clang 14 cannot capture a structured binding
        auto bad = [&](const std::string& what) { return Error(fmt::format("{}: tensor '{}': {}", path, tensor, what)); };
        if (!entry.is_object()) throw bad("its header entry is not an object");
        for (const auto& [k, v] : entry.items())
            if (k != "dtype" && k != "shape" && k != "data_offsets") throw bad(fmt::format("unexpected header field '{}'", k));
        if (!entry.contains("dtype") || !entry["dtype"].is_string()) throw bad("no dtype string");
        if (!entry.contains("shape") || !entry["shape"].is_array()) throw bad("no shape array");
        if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
            throw bad("data_offsets is not a pair of byte offsets");
        SafetensorsTensor t;
        t.name = name;
        t.dtype = entry["dtype"].get<std::string>();
        t.elem_bytes = elem_bytes_of(t.dtype);
        if (t.elem_bytes == 0) throw bad(fmt::format("dtype '{}' is not a safetensors dtype", t.dtype));
        const auto& shape = entry["shape"];
        if (shape.size() > kMaxRank) throw bad(fmt::format("{} dimensions (at most {})", shape.size(), kMaxRank));
        uint64_t elems = 1;
        for (const auto& d : shape) {
            if (!d.is_number_unsigned()) throw bad("a shape extent is not a non-negative integer");
            const uint64_t v = d.get<uint64_t>();
            if (v > kMaxElements || (v > 0 && elems > kMaxElements / v)) throw bad("its shape holds more than 2^48 elements");
            elems *= v;
            t.shape.push_back(int64_t(v));
        }
        const auto& off = entry["data_offsets"];
        if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) throw bad("data_offsets are not non-negative integers");
        const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
        if (begin > end) throw bad(fmt::format("data_offsets [{}, {}] end before they begin", begin, end));
        if (end > data_size)
            throw bad(fmt::format("data_offsets [{}, {}] run past the end of the data ({} bytes after the header): truncated?", begin, end,
                                  data_size));
        if (end - begin != elems * t.elem_bytes)
            throw bad(fmt::format("data_offsets [{}, {}] hold {} bytes, but {} elements of {} need {}", begin, end, end - begin, elems,
                                  t.dtype, elems * t.elem_bytes));
        t.data = data + begin;
        t.bytes = end - begin;
        ranges.push_back({begin, end, tensors_.size()});
        tensors_.push_back(std::move(t));
    }
    // As the format requires: the tensors tile the data exactly, with no
    // overlap, gap or trailing bytes.
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    uint64_t at = 0;
    for (const Range& r : ranges) {
        const std::string& name = tensors_[r.tensor].name;
        if (r.begin < at) throw Error(fmt::format("{}: tensor '{}' overlaps the data of another tensor (byte {})", path, name, r.begin));
        if (r.begin > at) throw Error(fmt::format("{}: bytes {} .. {} before tensor '{}' belong to no tensor", path, at, r.begin, name));
        at = r.end;
    }
    if (at != data_size) throw Error(fmt::format("{}: {} bytes after the last tensor belong to no tensor", path, data_size - at));
    std::vector<SafetensorsTensor> ordered;
    for (const Range& r : ranges) ordered.push_back(std::move(tensors_[r.tensor]));
    tensors_ = std::move(ordered);
    for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace hetero::model_detail
