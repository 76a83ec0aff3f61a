// Plugins that attack the process loading them, one per compile definition:
// a segfault, abort(), a hang or exit() while loading, a C++ exception out
// of create, a function table shorter than the ABI's. The registry must
// survive each (probed in a child process) and name the cause.
#include <hetero/ep_api.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

namespace {

const char* last_error() { return "hostile test plugin"; }

hetero_status create(const hetero_option*, size_t, hetero_ep** out) {
#if defined(HOSTILE_CREATE_THROWS)
    throw std::runtime_error("a C++ exception through the C ABI");
#else
    *out = nullptr;
    return HETERO_ERR_INTERNAL;
#endif
}
void destroy(hetero_ep*) {}

hetero_ep_api table = {
#if defined(HOSTILE_SHORT_TABLE)
    sizeof(uint32_t) * 2,  // claims only its first two fields
#else
    sizeof(hetero_ep_api),
#endif
    HETERO_ABI_VERSION, "hostile", "0.0.0", last_error, create, destroy,
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

#if defined(HOSTILE_EXIT_IN_CONSTRUCTOR)
[[gnu::constructor]] void on_load() { std::exit(0); }
#endif

}  // namespace

extern "C" HETERO_EP_EXPORT const hetero_ep_api* hetero_ep_init(const hetero_host_api*, uint32_t, const char**) {
#if defined(HOSTILE_SEGFAULT)
    std::raise(SIGSEGV);
#elif defined(HOSTILE_ABORT)
    std::abort();
#elif defined(HOSTILE_HANG)
    for (;;) pause();
#endif
    return &table;
}
