// GGUF v2/v3 reader. Every count, length and offset is checked against the
// bytes actually left in the mapping before it is used, so the header of a
// hostile file can neither read out of bounds nor make us allocate more than
// the file itself could describe.
#include <hetero/model/gguf.hpp>

#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>

#include "gguf_format.hpp"
#include "mapped_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

namespace hetero {

namespace {

using model_detail::MappedFile;

// Up-front reservation limit: a claimed count only reserves this much, so a
// header cannot make us allocate for entries the file does not contain.
constexpr uint64_t kReserveCap = 4096;

struct KvEntry {
    std::string key;
    uint64_t key_offset = 0;  // where the entry starts in the file (for messages)
    GgufRawValue raw;
};

// Sequential reader over the mapping that fails with the file, item and offset.
class Cursor {
public:
    Cursor(const std::string& path, const uint8_t* base, uint64_t size) : path_(path), base_(base), size_(size) {}

    uint64_t pos() const { return pos_; }
    uint64_t left() const { return size_ - pos_; }
    const uint8_t* here() const { return base_ + pos_; }

    [[noreturn]] void fail(uint64_t at, const std::string& what) const {
        throw Error(fmt::format("{}: {} (at byte {})", path_, what, at));
    }

    void need(uint64_t n, const std::string& what) const {
        if (n > left())
            fail(pos_, fmt::format("truncated file: {} needs {} bytes but only {} are left", what, n, left()));
    }

    template <class T>
    T read(const std::string& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, base_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string_view read_string(const std::string& what) {
        const uint64_t at = pos_;
        const uint64_t len = read<uint64_t>(what + " length");
        if (len > left())
            fail(at, fmt::format("{} has length {} but only {} bytes are left in the file", what, len, left()));
        std::string_view s(reinterpret_cast<const char*>(base_ + pos_), size_t(len));
        pos_ += len;
        return s;
    }

    void skip(uint64_t n, const std::string& what) {
        need(n, what);
        pos_ += n;
    }

private:
    const std::string& path_;
    const uint8_t* base_;
    uint64_t size_;
    uint64_t pos_ = 0;
};

bool is_integer(GgufType t) {
    switch (t) {
        case GgufType::UINT8: case GgufType::INT8: case GgufType::UINT16: case GgufType::INT16:
        case GgufType::UINT32: case GgufType::INT32: case GgufType::UINT64: case GgufType::INT64: return true;
        default: return false;
    }
}

bool is_signed(GgufType t) {
    return t == GgufType::INT8 || t == GgufType::INT16 || t == GgufType::INT32 || t == GgufType::INT64;
}

// Integer element `p` of type `t`, widened: signed types into `s`, unsigned into `u`.
void load_integer(GgufType t, const uint8_t* p, int64_t& s, uint64_t& u) {
    switch (t) {
        case GgufType::UINT8: { uint8_t v; std::memcpy(&v, p, 1); u = v; break; }
        case GgufType::INT8: { int8_t v; std::memcpy(&v, p, 1); s = v; break; }
        case GgufType::UINT16: { uint16_t v; std::memcpy(&v, p, 2); u = v; break; }
        case GgufType::INT16: { int16_t v; std::memcpy(&v, p, 2); s = v; break; }
        case GgufType::UINT32: { uint32_t v; std::memcpy(&v, p, 4); u = v; break; }
        case GgufType::INT32: { int32_t v; std::memcpy(&v, p, 4); s = v; break; }
        case GgufType::UINT64: { uint64_t v; std::memcpy(&v, p, 8); u = v; break; }
        case GgufType::INT64: { int64_t v; std::memcpy(&v, p, 8); s = v; break; }
        default: break;
    }
}

double load_float(GgufType t, const uint8_t* p) {
    if (t == GgufType::FLOAT32) { float v; std::memcpy(&v, p, 4); return v; }
    if (t == GgufType::FLOAT64) { double v; std::memcpy(&v, p, 8); return v; }
    int64_t s = 0;
    uint64_t u = 0;
    load_integer(t, p, s, u);
    return is_signed(t) ? double(s) : double(u);
}

}  // namespace

const char* gguf_type_name(GgufType type) {
    switch (type) {
        case GgufType::UINT8: return "uint8";
        case GgufType::INT8: return "int8";
        case GgufType::UINT16: return "uint16";
        case GgufType::INT16: return "int16";
        case GgufType::UINT32: return "uint32";
        case GgufType::INT32: return "int32";
        case GgufType::FLOAT32: return "float32";
        case GgufType::BOOL: return "bool";
        case GgufType::STRING: return "string";
        case GgufType::ARRAY: return "array";
        case GgufType::UINT64: return "uint64";
        case GgufType::INT64: return "int64";
        case GgufType::FLOAT64: return "float64";
    }
    return "?";
}

struct GgufFile::Impl {
    std::string path;
    std::unique_ptr<MappedFile> map;
    uint32_t version = 0;
    uint64_t alignment = gguf_format::kDefaultAlignment;
    uint64_t data_offset = 0;
    std::vector<KvEntry> kvs;
    std::map<std::string, size_t, std::less<>> kv_index;
    std::vector<GgufTensorInfo> tensors;
    std::map<std::string, size_t, std::less<>> tensor_index;

    const KvEntry& entry(std::string_view key) const {
        auto it = kv_index.find(key);
        if (it == kv_index.end()) throw Error(fmt::format("{}: metadata key '{}' is missing", path, key));
        return kvs[it->second];
    }
    const KvEntry* find(std::string_view key) const {
        auto it = kv_index.find(key);
        return it == kv_index.end() ? nullptr : &kvs[it->second];
    }
    // The integer under `key`, read as signed (s) and unsigned (u); nullptr
    // when there is none, an Error when it is not an integer (`expected`).
    const KvEntry* find_integer(std::string_view key, const char* expected, int64_t& s, uint64_t& u) const {
        const KvEntry* e = find(key);
        if (!e) return nullptr;
        if (!is_integer(e->raw.type)) wrong_type(*e, expected);
        load_integer(e->raw.type, e->raw.bytes, s, u);
        return e;
    }
    [[noreturn]] void wrong_type(const KvEntry& e, const char* expected) const {
        std::string actual = gguf_type_name(e.raw.type);
        if (e.raw.type == GgufType::ARRAY) actual = fmt::format("array of {}", gguf_type_name(e.raw.elem_type));
        throw Error(fmt::format("{}: metadata key '{}' (at byte {}) has type {}, expected {}", path, e.key, e.key_offset,
                                actual, expected));
    }

    void parse();
    void parse_value(Cursor& c, KvEntry& e, uint64_t index);
    void parse_tensor_infos(Cursor& c, uint64_t count);
    void place_tensors();
};

void GgufFile::Impl::parse_value(Cursor& c, KvEntry& e, uint64_t index) {
    const std::string item = fmt::format("metadata key #{} '{}'", index, e.key);
    const uint64_t type_at = c.pos();
    const uint32_t type = c.read<uint32_t>(item + " type");
    if (type > gguf_format::kMaxType) c.fail(type_at, fmt::format("{} has unknown value type {}", item, type));
    e.raw.type = GgufType(type);
    if (e.raw.type == GgufType::ARRAY) {
        const uint64_t elem_at = c.pos();
        const uint32_t elem = c.read<uint32_t>(item + " array element type");
        if (elem > gguf_format::kMaxType) c.fail(elem_at, fmt::format("{} has unknown array element type {}", item, elem));
        if (GgufType(elem) == GgufType::ARRAY) c.fail(elem_at, fmt::format("{}: nested arrays are not supported", item));
        e.raw.elem_type = GgufType(elem);
        const uint64_t count_at = c.pos();
        e.raw.count = c.read<uint64_t>(item + " array length");
        e.raw.bytes = c.here();
        const uint64_t start = c.pos();
        if (e.raw.elem_type == GgufType::STRING) {
            // Each string takes at least its 8-byte length.
            if (e.raw.count > c.left() / 8)
                c.fail(count_at, fmt::format("{} claims {} strings but only {} bytes are left", item, e.raw.count, c.left()));
            for (uint64_t i = 0; i < e.raw.count; ++i) c.read_string(fmt::format("{} element {}", item, i));
        } else {
            const uint64_t elem_size = gguf_format::scalar_size(e.raw.elem_type);
            if (e.raw.count > c.left() / elem_size)
                c.fail(count_at, fmt::format("{} claims {} elements of {} bytes but only {} bytes are left", item,
                                             e.raw.count, elem_size, c.left()));
            c.skip(e.raw.count * elem_size, item);
        }
        e.raw.size = c.pos() - start;
        return;
    }
    e.raw.count = 1;
    e.raw.bytes = c.here();
    const uint64_t start = c.pos();
    if (e.raw.type == GgufType::STRING) c.read_string(item + " string");
    else c.skip(gguf_format::scalar_size(e.raw.type), item + " value");
    e.raw.size = c.pos() - start;
}

void GgufFile::Impl::parse() {
    const uint8_t* base = map->data();
    const uint64_t size = map->size();
    if (size == 0) throw Error(fmt::format("{}: file is empty, not a GGUF file", path));
    Cursor c(path, base, size);
    if (size < 4 || std::memcmp(base, gguf_format::kMagic, 4) != 0)
        c.fail(0, "not a GGUF file (the first 4 bytes are not \"GGUF\")");
    c.skip(4, "magic");
    version = c.read<uint32_t>("version");
    if (version == 1) c.fail(4, "GGUF version 1 is not supported (only versions 2 and 3 are)");
    if (version == 0x02000000u || version == 0x03000000u)
        c.fail(4, "big-endian GGUF files are not supported");
    if (version != 2 && version != 3) c.fail(4, fmt::format("unsupported GGUF version {} (only 2 and 3 are)", version));
    const uint64_t n_tensors_at = c.pos();
    const uint64_t n_tensors = c.read<uint64_t>("tensor count");
    const uint64_t n_kv_at = c.pos();
    const uint64_t n_kv = c.read<uint64_t>("metadata count");
    // Each entry needs at least a key length, a type and one value byte.
    if (n_kv > c.left() / gguf_format::kMinKvBytes)
        c.fail(n_kv_at, fmt::format("metadata count {} is more than the {} bytes left could hold", n_kv, c.left()));
    kvs.reserve(size_t(std::min<uint64_t>(n_kv, kReserveCap)));  // grow with what actually parses
    for (uint64_t i = 0; i < n_kv; ++i) {
        KvEntry e;
        e.key_offset = c.pos();
        e.key = std::string(c.read_string(fmt::format("metadata key #{}", i)));
        if (e.key.empty()) c.fail(e.key_offset, fmt::format("metadata key #{} is empty", i));
        if (kv_index.count(e.key)) c.fail(e.key_offset, fmt::format("metadata key '{}' appears twice", e.key));
        parse_value(c, e, i);
        kv_index.emplace(e.key, kvs.size());
        kvs.push_back(std::move(e));
    }
    int64_t s = 0;
    uint64_t u = 0;
    if (const KvEntry* a = find_integer("general.alignment", "an unsigned integer", s, u)) {
        if (is_signed(a->raw.type)) u = s < 0 ? 0 : uint64_t(s);
        if (u == 0 || (u & (u - 1)) != 0 || u > gguf_format::kMaxAlignment)
            c.fail(a->key_offset, fmt::format("general.alignment {} is not a power of two between 1 and {}",
                                              is_signed(a->raw.type) ? std::to_string(s) : std::to_string(u),
                                              gguf_format::kMaxAlignment));
        alignment = u;
    }
    if (n_tensors > c.left() / gguf_format::kMinTensorInfoBytes)
        c.fail(n_tensors_at, fmt::format("tensor count {} is more than the {} bytes left could hold", n_tensors, c.left()));
    parse_tensor_infos(c, n_tensors);
    data_offset = (c.pos() + alignment - 1) / alignment * alignment;  // pos and alignment are both small: no overflow
    place_tensors();
}

void GgufFile::Impl::parse_tensor_infos(Cursor& c, uint64_t count) {
    tensors.reserve(size_t(std::min<uint64_t>(count, kReserveCap)));
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t at = c.pos();
        GgufTensorInfo t;
        t.name = std::string(c.read_string(fmt::format("tensor #{} name", i)));
        const std::string item = fmt::format("tensor #{} '{}'", i, t.name);
        if (t.name.empty()) c.fail(at, fmt::format("tensor #{} has an empty name", i));
        if (tensor_index.count(t.name)) c.fail(at, fmt::format("{}: the name appears twice", item));
        const uint64_t dims_at = c.pos();
        const uint32_t n_dims = c.read<uint32_t>(item + " dimension count");
        if (n_dims < 1 || n_dims > gguf_format::kMaxDims)
            c.fail(dims_at, fmt::format("{} has {} dimensions (must be 1 to {})", item, n_dims, gguf_format::kMaxDims));
        uint64_t elems = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne_at = c.pos();
            const uint64_t ne = c.read<uint64_t>(fmt::format("{} dimension {}", item, d));
            if (ne == 0 || ne > uint64_t(std::numeric_limits<int64_t>::max()))
                c.fail(ne_at, fmt::format("{} has invalid extent {} in dimension {}", item, int64_t(ne), d));
            if (__builtin_mul_overflow(elems, ne, &elems) || elems > uint64_t(std::numeric_limits<int64_t>::max()))
                c.fail(ne_at, fmt::format("{}: the element count overflows", item));
            t.ne.push_back(int64_t(ne));
        }
        const uint64_t type_at = c.pos();
        t.ggml_type = c.read<uint32_t>(item + " type");
        const auto traits = ggml_type_traits(t.ggml_type);
        if (!traits) c.fail(type_at, fmt::format("{} has unknown ggml type {}", item, t.ggml_type));
        if (uint64_t(t.ne[0]) % traits->block_elems != 0)
            c.fail(type_at, fmt::format("{}: innermost extent {} is not a multiple of the {} block size {}", item, t.ne[0],
                                        traits->name, traits->block_elems));
        if (__builtin_mul_overflow(elems / traits->block_elems, uint64_t(traits->block_bytes), &t.bytes))
            c.fail(type_at, fmt::format("{}: the byte size overflows", item));
        const uint64_t off_at = c.pos();
        t.offset = c.read<uint64_t>(item + " data offset");
        if (t.offset % alignment != 0)
            c.fail(off_at, fmt::format("{}: data offset {} is not a multiple of the alignment {}", item, t.offset, alignment));
        tensor_index.emplace(t.name, tensors.size());
        tensors.push_back(std::move(t));
    }
}

void GgufFile::Impl::place_tensors() {
    if (tensors.empty()) return;
    const uint64_t size = map->size();
    if (data_offset > size)
        throw Error(fmt::format("{}: truncated file: the tensor data section would start at byte {} but the file has {} bytes",
                                path, data_offset, size));
    const uint64_t data_size = size - data_offset;
    for (GgufTensorInfo& t : tensors) {
        if (t.offset > data_size || t.bytes > data_size - t.offset)
            throw Error(fmt::format(
                "{}: tensor '{}' ({}) needs {} bytes at data offset {}, outside the data section of {} bytes starting at byte {}: "
                "truncated or corrupt file",
                path, t.name, ggml_type_name(t.ggml_type), t.bytes, t.offset, data_size, data_offset));
        t.data = map->data() + data_offset + t.offset;
    }
    std::vector<const GgufTensorInfo*> order;
    for (const auto& t : tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset)
            throw Error(fmt::format("{}: tensors '{}' and '{}' overlap in the data section (at byte {})", path,
                                    order[i - 1]->name, order[i]->name, data_offset + order[i]->offset));
    // Each tensor's data runs to the next one (or the end of the file) but
    // for the padding to the alignment: a larger gap means its type or
    // shape describes fewer bytes than were written for it (a tensor
    // retyped to a smaller block type would otherwise run as garbage).
    for (size_t i = 0; i < order.size(); ++i) {
        const GgufTensorInfo& t = *order[i];
        const bool last = i + 1 == order.size();
        const uint64_t extent = (last ? data_size : order[i + 1]->offset) - t.offset;
        if (extent - t.bytes < alignment) continue;
        std::string shape;
        for (size_t d = t.ne.size(); d-- > 0;) shape += fmt::format("{}{}", shape.empty() ? "" : ", ", t.ne[d]);
        throw Error(fmt::format("{}: tensor '{}' of type {} and shape [{}] should hold {} bytes, but {} bytes lie before {}: "
                                "its type or shape does not match its data (the gap may be at most the alignment padding, {} bytes)",
                                path, t.name, ggml_type_name(t.ggml_type), shape, t.bytes, extent,
                                last ? std::string("the end of the file") : fmt::format("the next tensor '{}'", order[i + 1]->name),
                                alignment - 1));
    }
}

GgufFile::GgufFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->map = std::make_unique<MappedFile>(path);
    impl->parse();
    return GgufFile(std::move(impl));
}

uint32_t GgufFile::version() const { return impl_->version; }
uint64_t GgufFile::alignment() const { return impl_->alignment; }
uint64_t GgufFile::data_offset() const { return impl_->data_offset; }
bool GgufFile::has(std::string_view key) const { return impl_->find(key) != nullptr; }
GgufType GgufFile::type_of(std::string_view key) const { return impl_->entry(key).raw.type; }

GgufType GgufFile::array_type_of(std::string_view key) const {
    const KvEntry& e = impl_->entry(key);
    if (e.raw.type != GgufType::ARRAY) impl_->wrong_type(e, "array");
    return e.raw.elem_type;
}

uint64_t GgufFile::array_size(std::string_view key) const {
    const KvEntry& e = impl_->entry(key);
    if (e.raw.type != GgufType::ARRAY) impl_->wrong_type(e, "array");
    return e.raw.count;
}

GgufRawValue GgufFile::raw_value(std::string_view key) const { return impl_->entry(key).raw; }

std::optional<uint64_t> GgufFile::get_uint(std::string_view key) const {
    int64_t s = 0;
    uint64_t u = 0;
    const KvEntry* e = impl_->find_integer(key, "an unsigned integer", s, u);
    if (!e) return std::nullopt;
    if (!is_signed(e->raw.type)) return u;
    if (s < 0)
        throw Error(fmt::format("{}: metadata key '{}' (at byte {}) is {}, expected a non-negative value", impl_->path, key,
                                e->key_offset, s));
    return uint64_t(s);
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
    int64_t s = 0;
    uint64_t u = 0;
    const KvEntry* e = impl_->find_integer(key, "an integer", s, u);
    if (!e) return std::nullopt;
    if (is_signed(e->raw.type)) return s;
    if (u > uint64_t(std::numeric_limits<int64_t>::max()))
        throw Error(fmt::format("{}: metadata key '{}' (at byte {}) value {} does not fit a signed 64-bit integer",
                                impl_->path, key, e->key_offset, u));
    return int64_t(u);
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return std::nullopt;
    if (e->raw.type != GgufType::FLOAT32 && e->raw.type != GgufType::FLOAT64 && !is_integer(e->raw.type))
        impl_->wrong_type(*e, "a number");
    return load_float(e->raw.type, e->raw.bytes);
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return std::nullopt;
    if (e->raw.type != GgufType::BOOL) impl_->wrong_type(*e, "bool");
    return e->raw.bytes[0] != 0;
}

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return std::nullopt;
    if (e->raw.type != GgufType::STRING) impl_->wrong_type(*e, "string");
    return std::string(reinterpret_cast<const char*>(e->raw.bytes + 8), size_t(e->raw.size - 8));
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return {};
    if (e->raw.type != GgufType::ARRAY || e->raw.elem_type != GgufType::STRING) impl_->wrong_type(*e, "array of string");
    std::vector<std::string> out;
    out.reserve(size_t(e->raw.count));  // open() saw every one of these strings
    const uint8_t* p = e->raw.bytes;
    for (uint64_t i = 0; i < e->raw.count; ++i) {  // lengths were validated by open()
        uint64_t len;
        std::memcpy(&len, p, 8);
        out.emplace_back(reinterpret_cast<const char*>(p + 8), size_t(len));
        p += 8 + len;
    }
    return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return {};
    const GgufType t = e->raw.elem_type;
    if (e->raw.type != GgufType::ARRAY || (t != GgufType::FLOAT32 && t != GgufType::FLOAT64 && !is_integer(t)))
        impl_->wrong_type(*e, "array of float32");
    const uint64_t step = gguf_format::scalar_size(t);
    std::vector<float> out(size_t(e->raw.count));
    for (uint64_t i = 0; i < e->raw.count; ++i) out[size_t(i)] = float(load_float(t, e->raw.bytes + i * step));
    return out;
}

std::vector<int32_t> GgufFile::get_int_array(std::string_view key) const {
    const KvEntry* e = impl_->find(key);
    if (!e) return {};
    const GgufType t = e->raw.elem_type;
    if (e->raw.type != GgufType::ARRAY || !is_integer(t)) impl_->wrong_type(*e, "array of integers");
    const uint64_t step = gguf_format::scalar_size(t);
    std::vector<int32_t> out(size_t(e->raw.count));
    for (uint64_t i = 0; i < e->raw.count; ++i) {
        int64_t s = 0;
        uint64_t u = 0;
        load_integer(t, e->raw.bytes + i * step, s, u);
        const bool fits = is_signed(t) ? (s >= std::numeric_limits<int32_t>::min() && s <= std::numeric_limits<int32_t>::max())
                                       : u <= uint64_t(std::numeric_limits<int32_t>::max());
        if (!fits)
            throw Error(fmt::format("{}: metadata key '{}' (at byte {}) element {} does not fit a 32-bit integer",
                                    impl_->path, key, e->key_offset, i));
        out[size_t(i)] = is_signed(t) ? int32_t(s) : int32_t(u);
    }
    return out;
}

std::vector<std::string> GgufFile::keys() const {
    std::vector<std::string> out;
    out.reserve(impl_->kvs.size());
    for (const auto& e : impl_->kvs) out.push_back(e.key);
    return out;
}

const std::vector<GgufTensorInfo>& GgufFile::tensors() const { return impl_->tensors; }

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    auto it = impl_->tensor_index.find(name);
    return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

const std::string& GgufFile::path() const { return impl_->path; }
const uint8_t* GgufFile::mapped_data() const { return impl_->map->data(); }
uint64_t GgufFile::mapped_size() const { return impl_->map->size(); }

}  // namespace hetero
