// Editing generated GGUF files the way damage or a careless tool would: a
// few bytes overwritten in place, or the file written again with metadata
// keys dropped and added (tensors copied as they are).
#pragma once

#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::test {

// Overwrites `bytes.size()` bytes of `path` at `offset`.
inline void patch_file(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    f.seekp(std::streamoff(offset));
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!f) throw std::runtime_error("cannot patch " + path);
}

// The file offset of tensor `name`'s first byte.
inline uint64_t tensor_file_offset(const std::string& path, const std::string& name) {
    const GgufFile f = GgufFile::open(path);
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) throw std::runtime_error(path + " has no tensor " + name);
    return f.data_offset() + t->offset;
}

// Writes `src` again as `dst`, without the keys `drop` returns true for and
// with what `add` adds after the others.
inline void rewrite_gguf(const std::string& src, const std::string& dst, const std::function<bool(const std::string&)>& drop,
                         const std::function<void(GgufWriter&)>& add) {
    const GgufFile f = GgufFile::open(src);
    GgufWriter w;
    if (f.alignment() != 32) w.set_alignment(uint32_t(f.alignment()));
    for (const std::string& key : f.keys())
        if (key != "general.alignment" && !(drop && drop(key))) w.add_raw(key, f.raw_value(key));
    if (add) add(w);
    for (const GgufTensorInfo& t : f.tensors()) w.add_tensor(t.name, t.ggml_type, t.ne, t.data, t.bytes);
    w.write(dst);
}

}  // namespace hetero::test
