// A device of the session's plan: buffers, weights, its worker thread; and
// the host side of a hand-over.
#include "session_parts.hpp"

#include <chrono>

#include <cstdlib>

namespace hetero {

HostBlock::HostBlock(uint64_t n) : bytes(n) {
    data = static_cast<uint8_t*>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096));
    if (!data) throw Error(fmt::format("out of host memory ({} bytes for a hand-over buffer)", n));
}

HostBlock::~HostBlock() { std::free(data); }

Exchange::Exchange(const HandOver& h)
    : name(h.name), bytes(h.bytes), host(std::make_unique<HostBlock>(h.bytes)), producer(h.from_device), needs_host(h.via_host),
      alias_of(h.alias_of), alias_offset(h.alias_offset) {}

SessionDevice::~SessionDevice() {
    if (thread.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mu);
            quit = true;
        }
        cv.notify_all();
        thread.join();
    }
    for (hetero_buffer* b : buffers) api->buffer_release(p->ep(), b);
}

void SessionDevice::check(hetero_status s, const std::string& what) const {
    if (s == HETERO_OK) return;
    try {
        p->check(s, what);
    } catch (const ProviderError& e) {
        throw DeviceFault(index, stats.label, e);
    }
}

hetero_buffer* SessionDevice::alloc(uint64_t bytes, const std::string& what) {
    hetero_buffer* b = nullptr;
    check(api->buffer_alloc(p->ep(), dev, bytes, &b), fmt::format("allocating {} ({} bytes)", what, bytes));
    buffers.push_back(b);
    stats.allocated_bytes += bytes;
    return b;
}

hetero_buffer* SessionDevice::import(void* ptr, uint64_t bytes) {
    if (!unified()) return nullptr;
    hetero_buffer* b = nullptr;
    if (api->buffer_import_host(p->ep(), dev, ptr, bytes, &b) != HETERO_OK) return nullptr;
    buffers.push_back(b);
    return b;
}

hetero_buffer* SessionDevice::weight(const WeightView& w, int64_t r0, int64_t r1) {
    const std::string key = fmt::format("{} rows {}-{}", w.name, r0, r1);
    auto it = weights.find(key);
    if (it != weights.end()) return it->second;
    const uint64_t row_bytes = w.bytes / uint64_t(w.shape[0]);
    const uint64_t offset = uint64_t(r0) * row_bytes, bytes = uint64_t(r1 - r0) * row_bytes;
    // Constants are never written, so read-only mapped pages are fine.
    hetero_buffer* b = import(const_cast<uint8_t*>(w.data + offset), bytes);
    if (!b) {
        const auto t0 = std::chrono::steady_clock::now();
        b = alloc(bytes, w.name);
        check(api->buffer_write(p->ep(), b, 0, w.data + offset, bytes), "uploading " + w.name);
        uploaded_bytes += bytes;
        upload_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    weights[key] = b;
    return b;
}

void SessionDevice::start_worker() {
    thread = std::thread([this] {
        uint64_t seen = 0;
        for (;;) {
            std::function<void()> j;
            {
                std::unique_lock<std::mutex> lock(mu);
                cv.wait(lock, [&] { return quit || go != seen; });
                if (quit) return;
                seen = go;
                j = job;
            }
            j();
        }
    });
}

}  // namespace hetero
