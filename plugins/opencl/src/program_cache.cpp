#include "program_cache.hpp"

#include "cl_util.hpp"

#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/cache_dir.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace hetero::opencl {
namespace {

constexpr char kMagic[8] = {'H', 'E', 'T', 'C', 'L', 'B', 'I', 'N'};
constexpr uint32_t kFormat = 1;

// On-disk entry: magic, format, key hash, payload size, payload hash, payload.
struct EntryHeader {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    uint64_t key;
    uint64_t size;
    uint64_t payload_hash;
};

std::string hex(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string build_log(cl_program p, cl_device_id dev) {
    size_t n = 0;
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n) clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
}

uint64_t entry_key(std::string_view source, const std::string& options, const std::string& device_key) {
    return fnv1a(source, fnv1a(options, fnv1a(device_key)));
}

std::filesystem::path entry_path(const std::string& cache_dir, const std::string& label, uint64_t key) {
    return std::filesystem::path(cache_dir) / (label + "-" + hex(key) + ".bin");
}

bool header_ok(const EntryHeader& h, uint64_t key) {
    return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.format == kFormat && h.key == key && h.size != 0 &&
           h.size <= (uint64_t(1) << 30);
}

std::vector<unsigned char> read_entry(const std::filesystem::path& file, uint64_t key) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return {};
    EntryHeader h{};
    if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return {};
    if (!header_ok(h, key)) return {};
    std::vector<unsigned char> bin(h.size);
    if (!in.read(reinterpret_cast<char*>(bin.data()), std::streamsize(h.size))) return {};
    if (fnv1a(bin.data(), bin.size()) != h.payload_hash) return {};
    return bin;
}

void write_entry(const std::filesystem::path& file, uint64_t key, const std::vector<unsigned char>& bin) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    // Written beside the target, then renamed: readers, and other processes
    // caching the same program, never see half an entry. A cache that cannot
    // be written only costs a build later.
    EntryHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.format = kFormat;
    h.key = key;
    h.size = bin.size();
    h.payload_hash = fnv1a(bin.data(), bin.size());
    hetero::sdk::write_file_atomically(file.string(), {std::string_view(reinterpret_cast<const char*>(&h), sizeof h),
                                                       std::string_view(reinterpret_cast<const char*>(bin.data()), bin.size())});
}

std::vector<unsigned char> program_binary(cl_program p) {
    size_t size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) return {};
    std::vector<unsigned char> bin(size);
    unsigned char* ptr = bin.data();
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return {};
    return bin;
}

cl_program try_binary(cl_context ctx, cl_device_id dev, const std::vector<unsigned char>& bin, const std::string& options) {
    const unsigned char* ptr = bin.data();
    const size_t size = bin.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(ctx, 1, &dev, &size, &ptr, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS || !p) {
        if (p) clReleaseProgram(p);
        return nullptr;
    }
    if (clBuildProgram(p, 1, &dev, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
        clReleaseProgram(p);
        return nullptr;
    }
    return p;
}

}  // namespace

std::string default_cache_dir() { return sdk::user_cache_dir("opencl"); }

bool program_cached(const std::string& label, std::string_view source, const std::string& options, const std::string& device_key,
                    const std::string& cache_dir) {
    if (cache_dir.empty()) return false;
    const uint64_t key = entry_key(source, options, device_key);
    std::ifstream in(entry_path(cache_dir, label, key), std::ios::binary);
    EntryHeader h{};
    return in && in.read(reinterpret_cast<char*>(&h), sizeof h) && header_ok(h, key);
}

BuiltProgram build_program(cl_context ctx, cl_device_id dev, const std::string& label, std::string_view source,
                           const std::string& options, const std::string& device_key, const std::string& cache_dir) {
    const uint64_t key = entry_key(source, options, device_key);
    const std::filesystem::path file = cache_dir.empty() ? std::filesystem::path() : entry_path(cache_dir, label, key);
    if (!cache_dir.empty()) {
        const auto bin = read_entry(file, key);
        if (!bin.empty())
            if (cl_program p = try_binary(ctx, dev, bin, options)) return {p, true};
    }

    const char* src = source.data();
    const size_t len = source.size();
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, &len, &err);
    cl_check(err, "clCreateProgramWithSource", HETERO_ERR_COMPILE_FAILED);
    err = clBuildProgram(p, 1, &dev, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        const std::string log = build_log(p, dev);
        clReleaseProgram(p);
        sdk::fail(err == CL_OUT_OF_HOST_MEMORY ? HETERO_ERR_OUT_OF_MEMORY : HETERO_ERR_COMPILE_FAILED,
                  "OpenCL program " + label + " build failed (" + cl_error_name(err) + "):\n" + log);
    }
    // Warnings, or what options like NVIDIA's -cl-nv-verbose ask the compiler to tell.
    if (const std::string log = build_log(p, dev); !log.empty()) sdk::log(HETERO_LOG_DEBUG, "opencl", "program " + label + " build log:\n" + log);
    if (!cache_dir.empty()) {
        const auto bin = program_binary(p);
        if (!bin.empty()) write_entry(file, key, bin);
    }
    return {p, false};
}

}  // namespace hetero::opencl
