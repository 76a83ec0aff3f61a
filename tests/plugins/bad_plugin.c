/* One source, several broken plugins, chosen by a compile definition. */
#include <hetero/ep_api.h>

#include <stddef.h>

#if defined(BAD_NO_SYMBOL)
HETERO_EP_EXPORT int hetero_something_else(void) { return 42; }
#else

#if defined(BAD_NULL_ERROR)
static const char* last_error(void) { return NULL; } /* the ABI says never NULL */
#else
static const char* last_error(void) { return "creation refused on purpose"; }
#endif
static hetero_status create(const hetero_option* o, size_t n, hetero_ep** out) {
    (void)o;
    (void)n;
    (void)out;
    return HETERO_ERR_INTERNAL;
}
static void destroy(hetero_ep* ep) { (void)ep; }

static hetero_ep_api table = {
    sizeof(hetero_ep_api),
#if defined(BAD_FUTURE_ABI)
    (HETERO_ABI_VERSION_MAJOR + 1u) << 16,
#else
    HETERO_ABI_VERSION,
#endif
#if defined(BAD_NAME)
    "Bad-Name!",
#else
    "broken",
#endif
    "0.0.0", last_error, create, destroy,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

HETERO_EP_EXPORT const hetero_ep_api* hetero_ep_init(const hetero_host_api* host, uint32_t abi, const char** reason) {
    (void)host;
    (void)abi;
#if defined(BAD_INIT_FAILS)
    *reason = "this device is on fire";
    return NULL;
#else
    (void)reason;
    return &table;
#endif
}
#endif
