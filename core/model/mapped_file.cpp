#include "mapped_file.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hetero::model_detail {

MappedFile::MappedFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer; the type check below refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw Error(fmt::format("{}: cannot stat: {}", path, std::strerror(e)));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(fmt::format("{}: not a regular file", path));
    }
    size_ = uint64_t(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_t(size_), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int e = errno;
            ::close(fd);
            throw Error(fmt::format("{}: cannot map {} bytes: {}", path, size_, std::strerror(e)));
        }
        data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_t(size_));
}

}  // namespace hetero::model_detail
