#include <hetero/model/gguf_writer.hpp>

#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/sdk/atomic_file.hpp>

#include "gguf_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace hetero {

namespace {

template <class T>
void put(std::vector<uint8_t>& out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_bytes(std::vector<uint8_t>& out, const void* p, uint64_t n) {
    if (n == 0) return;
    const size_t at = out.size();
    out.resize(at + size_t(n));
    std::memcpy(out.data() + at, p, size_t(n));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    put_bytes(out, s.data(), s.size());
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

void GgufWriter::set_alignment(uint32_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw Error(fmt::format("GGUF writer: alignment {} is not a power of two", alignment));
    alignment_ = alignment;
    if (alignment != gguf_format::kDefaultAlignment) add_uint32("general.alignment", alignment);
}

void GgufWriter::add_kv(const std::string& key, GgufType type, const void* value, uint64_t size) {
    if (std::find(keys_.begin(), keys_.end(), key) != keys_.end())
        throw Error(fmt::format("GGUF writer: metadata key '{}' added twice", key));
    keys_.push_back(key);
    put_string(kv_bytes_, key);
    put<uint32_t>(kv_bytes_, uint32_t(type));
    put_bytes(kv_bytes_, value, size);
    ++n_kv_;
}

void GgufWriter::add_uint8(const std::string& k, uint8_t v) { add_kv(k, GgufType::UINT8, &v, 1); }
void GgufWriter::add_int8(const std::string& k, int8_t v) { add_kv(k, GgufType::INT8, &v, 1); }
void GgufWriter::add_uint16(const std::string& k, uint16_t v) { add_kv(k, GgufType::UINT16, &v, 2); }
void GgufWriter::add_int16(const std::string& k, int16_t v) { add_kv(k, GgufType::INT16, &v, 2); }
void GgufWriter::add_uint32(const std::string& k, uint32_t v) { add_kv(k, GgufType::UINT32, &v, 4); }
void GgufWriter::add_int32(const std::string& k, int32_t v) { add_kv(k, GgufType::INT32, &v, 4); }
void GgufWriter::add_uint64(const std::string& k, uint64_t v) { add_kv(k, GgufType::UINT64, &v, 8); }
void GgufWriter::add_int64(const std::string& k, int64_t v) { add_kv(k, GgufType::INT64, &v, 8); }
void GgufWriter::add_float32(const std::string& k, float v) { add_kv(k, GgufType::FLOAT32, &v, 4); }
void GgufWriter::add_float64(const std::string& k, double v) { add_kv(k, GgufType::FLOAT64, &v, 8); }
void GgufWriter::add_bool(const std::string& k, bool v) {
    const uint8_t b = v ? 1 : 0;
    add_kv(k, GgufType::BOOL, &b, 1);
}
void GgufWriter::add_string(const std::string& k, const std::string& v) {
    std::vector<uint8_t> enc;
    put_string(enc, v);
    add_kv(k, GgufType::STRING, enc.data(), enc.size());
}

void GgufWriter::add_string_array(const std::string& k, const std::vector<std::string>& v) {
    std::vector<uint8_t> enc;
    put<uint32_t>(enc, uint32_t(GgufType::STRING));
    put<uint64_t>(enc, v.size());
    for (const auto& s : v) put_string(enc, s);
    add_kv(k, GgufType::ARRAY, enc.data(), enc.size());
}

void GgufWriter::add_float32_array(const std::string& k, const std::vector<float>& v) {
    add_array(k, GgufType::FLOAT32, v.size(), v.data());
}

void GgufWriter::add_int32_array(const std::string& k, const std::vector<int32_t>& v) {
    add_array(k, GgufType::INT32, v.size(), v.data());
}

void GgufWriter::add_array(const std::string& k, GgufType elem_type, uint64_t count, const void* bytes) {
    const uint64_t elem = gguf_format::scalar_size(elem_type);
    if (elem == 0) throw Error(fmt::format("GGUF writer: key '{}': add_array needs a fixed-size element type", k));
    std::vector<uint8_t> enc;
    put<uint32_t>(enc, uint32_t(elem_type));
    put<uint64_t>(enc, count);
    put_bytes(enc, bytes, count * elem);
    add_kv(k, GgufType::ARRAY, enc.data(), enc.size());
}

void GgufWriter::add_raw(const std::string& k, const GgufRawValue& v) {
    if (v.type != GgufType::ARRAY) {
        add_kv(k, v.type, v.bytes, v.size);
        return;
    }
    std::vector<uint8_t> enc;
    put<uint32_t>(enc, uint32_t(v.elem_type));
    put<uint64_t>(enc, v.count);
    put_bytes(enc, v.bytes, v.size);
    add_kv(k, GgufType::ARRAY, enc.data(), enc.size());
}

void GgufWriter::check_tensor(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, uint64_t bytes) const {
    const auto traits = ggml_type_traits(ggml_type);
    if (!traits) throw Error(fmt::format("GGUF writer: tensor '{}' has unknown ggml type {}", name, ggml_type));
    if (ne.empty() || ne.size() > gguf_format::kMaxDims)
        throw Error(fmt::format("GGUF writer: tensor '{}' has {} dimensions", name, ne.size()));
    uint64_t elems = 1;
    for (int64_t d : ne) {
        if (d <= 0) throw Error(fmt::format("GGUF writer: tensor '{}' has extent {}", name, d));
        elems *= uint64_t(d);
    }
    if (uint64_t(ne[0]) % traits->block_elems != 0 || elems / traits->block_elems * traits->block_bytes != bytes)
        throw Error(fmt::format("GGUF writer: tensor '{}' of type {} and {} elements cannot have {} bytes", name,
                                traits->name, elems, bytes));
    for (const auto& t : tensors_)
        if (t.name == name) throw Error(fmt::format("GGUF writer: tensor '{}' added twice", name));
}

void GgufWriter::add_tensor(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, const void* data,
                            uint64_t bytes) {
    check_tensor(name, ggml_type, ne, bytes);
    const auto* p = static_cast<const uint8_t*>(data);
    tensors_.push_back({name, ggml_type, ne, bytes, std::vector<uint8_t>(p, p + bytes), nullptr});
}

void GgufWriter::add_tensor_deferred(const std::string& name, uint32_t ggml_type, const std::vector<int64_t>& ne, uint64_t bytes,
                                     TensorFill fill) {
    check_tensor(name, ggml_type, ne, bytes);
    if (!fill) throw Error(fmt::format("GGUF writer: deferred tensor '{}' has no fill function", name));
    tensors_.push_back({name, ggml_type, ne, bytes, {}, std::move(fill)});
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
    std::vector<uint8_t> out;
    put_bytes(out, gguf_format::kMagic, 4);
    put<uint32_t>(out, gguf_format::kWriteVersion);
    put<uint64_t>(out, tensors_.size());
    put<uint64_t>(out, n_kv_);
    put_bytes(out, kv_bytes_.data(), kv_bytes_.size());
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        put_string(out, t.name);
        put<uint32_t>(out, uint32_t(t.ne.size()));
        for (int64_t d : t.ne) put<uint64_t>(out, uint64_t(d));
        put<uint32_t>(out, t.ggml_type);
        put<uint64_t>(out, offset);
        offset = align_up(offset + t.bytes, alignment_);
    }
    if (!tensors_.empty()) out.resize(align_up(out.size(), alignment_), 0);
    return out;
}

bool GgufWriter::stream(const std::function<bool(const uint8_t*, uint64_t)>& put_out) const {
    const std::vector<uint8_t> header = header_bytes();
    if (!put_out(header.data(), header.size())) return false;
    const std::vector<uint8_t> zeros(alignment_, 0);
    std::vector<uint8_t> made;
    for (const auto& t : tensors_) {
        const uint8_t* data = t.data.data();
        if (t.fill) {
            made.assign(size_t(t.bytes), 0);
            t.fill(made.data());
            data = made.data();
        }
        if (t.bytes > 0 && !put_out(data, t.bytes)) return false;
        const uint64_t pad = align_up(t.bytes, alignment_) - t.bytes;
        if (pad > 0 && !put_out(zeros.data(), pad)) return false;
    }
    return true;
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
    std::vector<uint8_t> out;
    stream([&](const uint8_t* p, uint64_t n) {
        put_bytes(out, p, n);
        return true;
    });
    return out;
}

void GgufWriter::write(const std::string& path) const {
    const std::filesystem::path target(path);
    std::error_code ec;
    if (std::filesystem::exists(target, ec) && !std::filesystem::is_regular_file(target, ec)) {
        // A device or FIFO cannot be replaced: write into it.
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
        int err = 0;
        try {
            stream([&](const uint8_t* p, uint64_t n) {
                if (std::fwrite(p, 1, size_t(n), f) != size_t(n)) err = errno ? errno : EIO;
                return err == 0;
            });
        } catch (...) {
            std::fclose(f);
            throw;
        }
        if (!err && std::fflush(f) != 0) err = errno ? errno : EIO;
        if (std::fclose(f) != 0 && !err) err = errno ? errno : EIO;
        if (err) throw Error(fmt::format("{}: write failed ({})", path, std::strerror(err)));
        return;
    }
    // Written beside the target, synced, then renamed over it: a failed or
    // interrupted write never leaves a partial file under the target's name,
    // and a target that was one of the inputs stays whole until the end.
    const std::string why = sdk::write_file_atomically_streamed(
        path,
        [&](const sdk::PutBytes& put_part) {
            stream([&](const uint8_t* p, uint64_t n) { return put_part(std::string_view(reinterpret_cast<const char*>(p), size_t(n))); });
            return std::string();
        },
        true);
    if (!why.empty()) throw Error(fmt::format("{}: write failed ({}); nothing was written under that name", path, why));
}

}  // namespace hetero
