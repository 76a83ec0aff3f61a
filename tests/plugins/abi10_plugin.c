/* A provider as a plugin built for ABI 1.0 behaves, for the tests of the
 * core's backward compatibility: its table says 1.0, it knows nothing of the
 * hetero_device_props fields of 1.1 and, the worst a 1.0 plugin may do,
 * leaves struct_size as the caller set it after writing over the caller's
 * whole struct. One GPU-kind device that reports a peak and a bandwidth;
 * op_supported accepts matmuls without an estimate and refuses the rest.
 * Written in C against the C ABI alone, as a vendor without the SDK would. */
#include <hetero/ep_api.h>

#include <stdio.h>
#include <string.h>

static const char* g_error = "";
static int g_instance;

static const char* last_error(void) { return g_error; }

static hetero_status create(const hetero_option* options, size_t n, hetero_ep** out) {
    (void)options;
    if (n) {
        g_error = "abi10test takes no options";
        return HETERO_ERR_INVALID_ARGUMENT;
    }
    *out = (hetero_ep*)&g_instance;
    return HETERO_OK;
}

static void destroy(hetero_ep* ep) { (void)ep; }

static uint32_t device_count(hetero_ep* ep) {
    (void)ep;
    return 1;
}

static hetero_status device_props(hetero_ep* ep, uint32_t device, hetero_device_props* props) {
    (void)ep;
    if (device != 0 || !props) {
        g_error = "no such device";
        return HETERO_ERR_INVALID_ARGUMENT;
    }
    const uint32_t size = props->struct_size;
    memset(props, 0xab, size); /* bytes past the 1.0 fields included */
    props->struct_size = size;
    props->abi_version = 1u << 16;
    props->kind = HETERO_DEVICE_GPU;
    props->flags = 0;
    snprintf(props->name, sizeof props->name, "%s", "abi 1.0 test device");
    snprintf(props->driver, sizeof props->driver, "%s", "built for ABI 1.0");
    props->memory_bytes = 1ull << 30;
    /* plus a bit ABI 1.0 does not define (Q5_1's, since 1.2): the registry drops it */
    props->dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_0) | HETERO_DTYPE_BIT(12);
    props->peak_gflops = 1000.0;
    props->peak_bandwidth_gbs = 100.0;
    props->compute_units = 8;
    props->subgroup_size = 32;
    return HETERO_OK;
}

static hetero_status op_supported(hetero_ep* ep, uint32_t device, const hetero_node* node, const hetero_tensor_desc* tensors,
                                  uint32_t n_tensors, double* est_seconds) {
    (void)ep;
    (void)device;
    (void)tensors;
    (void)n_tensors;
    if (est_seconds) *est_seconds = -1.0;
    if (node->op == HETERO_OP_MATMUL) return HETERO_OK;
    g_error = "abi10test runs matmuls only";
    return HETERO_ERR_UNSUPPORTED;
}

static const hetero_ep_api table = {
    .struct_size = sizeof(hetero_ep_api),
    .abi_version = 1u << 16, /* 1.0 */
    .name = "abi10test",
    .version = "1.0",
    .last_error = last_error,
    .create = create,
    .destroy = destroy,
    .device_count = device_count,
    .device_props = device_props,
    .op_supported = op_supported,
    /* Buffers, compile and execute: never called by the tests that load it. */
};

HETERO_EP_EXPORT const hetero_ep_api* hetero_ep_init(const hetero_host_api* host, uint32_t abi, const char** reason) {
    (void)host;
    (void)abi;
    (void)reason;
    return &table;
}
