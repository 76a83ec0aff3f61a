/* The ABI must compile as strict C99: this file is built with -std=c99 -pedantic -Werror. */
#include <hetero/ep_api.h>

/* The 1.0 layout of hetero_device_props is frozen: the fields of 1.1 start
 * where a 1.0 struct ended (312 bytes on every ABI the project targets). */
typedef char hetero_props_1_0_size_is_frozen[offsetof(hetero_device_props, resource) == 312 ? 1 : -1];

int hetero_abi_c99_check(void);
int hetero_abi_c99_check(void) {
    hetero_tensor_desc t = {HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, 2, 0, {4, 8, 0, 0}, "x"};
    hetero_graph g = {sizeof(hetero_graph), HETERO_ABI_VERSION, 1, 0, &t, NULL};
    hetero_device_props p;
    p.struct_size = (uint32_t)offsetof(hetero_device_props, resource); /* what a 1.0 provider returns */
    p.resource[0] = '\0';
    p.launch_seconds_hint = 0.0;
    p.compile_seconds_hint = 0.0;
    return (int)(g.n_tensors + t.ndim) + (int)HETERO_ABI_MAJOR_OF(HETERO_ABI_VERSION) +
           (HETERO_HAS_FIELD(hetero_device_props, &p, resource) ? 1 : 0) + (int)HETERO_ABI_MINOR_OF(HETERO_ABI_VERSION);
}
