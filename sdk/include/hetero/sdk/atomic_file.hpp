// Cache files written so that nobody sees half of one: the bytes go to a
// temporary file in the target's directory (a name no other process or
// thread uses: pid, a counter, created with O_EXCL), which is then renamed
// over the target. Readers see the old file or the new one; two processes
// writing the same entry at once each rename a complete file, and the last
// rename wins. The temporary file is in the table of temp_files.hpp while it
// exists, so a program that installs its handler loses none to SIGINT or
// SIGTERM. Used by the core's GGUF writer, profile store and plugin-probe verdicts, the
// OpenCL program cache, the Vulkan pipeline cache and npu_emu's caches.
#pragma once

#include <hetero/sdk/temp_files.hpp>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace hetero::sdk {

namespace detail {

inline std::atomic<uint64_t>& temp_counter() {
    static std::atomic<uint64_t> n{0};
    return n;
}

inline bool write_all(int fd, std::string_view bytes) {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t w = ::write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        left -= size_t(w);
    }
    return true;
}

}  // namespace detail

// Writes to `path` as described above the bytes `produce` hands to its
// `put` argument, piece by piece (so a large file need not be held in
// memory); `put` returns false once a write has failed, and `produce`
// returns "" or what went wrong on its side. With `sync`, the bytes reach
// the disk (fsync) before the rename. Returns "" on success, else what
// failed; then the target is as it was and no temporary file is left, also
// when `produce` throws (the exception then propagates).
using PutBytes = std::function<bool(std::string_view)>;
inline std::string write_file_atomically_streamed(const std::string& path, const std::function<std::string(const PutBytes&)>& produce,
                                                  bool sync = false) {
    std::string tmp;
    int fd = -1;
    std::optional<TempFileGuard> on_signal;  // registered before it exists: no moment a signal could leave it
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(detail::temp_counter().fetch_add(1));
        on_signal.emplace(tmp);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) return "cannot create " + tmp + ": " + std::strerror(errno);
    }
    if (fd < 0) return "cannot create a temporary file beside " + path;
    bool ok = true;
    int err = 0;
    const PutBytes put = [&](std::string_view part) {
        if (ok && !detail::write_all(fd, part)) {
            ok = false;
            err = errno;
        }
        return ok;
    };
    std::string why;
    try {
        why = produce(put);
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    if (!why.empty()) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return why;
    }
    if (ok && sync && ::fsync(fd) != 0) {
        ok = false;
        err = errno;
    }
    if (::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
        ok = false;
        err = errno;
    }
    if (ok) return "";
    ::unlink(tmp.c_str());
    return "cannot write " + path + ": " + std::strerror(err ? err : EIO);
}

// Writes the concatenation of `parts` to `path` as described above (the
// directory must exist); with `sync`, the bytes reach the disk (fsync) before
// the rename. Returns "" on success, else what failed; then the target is as
// it was and no temporary file is left.
inline std::string write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts, bool sync = false) {
    return write_file_atomically_streamed(
        path,
        [&](const PutBytes& put) {
            for (std::string_view part : parts)
                if (!put(part)) break;
            return std::string();
        },
        sync);
}

inline std::string write_file_atomically(const std::string& path, std::string_view bytes, bool sync = false) {
    return write_file_atomically(path, std::vector<std::string_view>{bytes}, sync);
}

}  // namespace hetero::sdk
