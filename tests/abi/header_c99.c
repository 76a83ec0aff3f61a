/* The ABI must compile as strict C99: this file is built with -std=c99 -pedantic -Werror. */
#include <hetero/ep_api.h>

int hetero_abi_c99_check(void);
int hetero_abi_c99_check(void) {
    hetero_tensor_desc t = {HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, 2, 0, {4, 8, 0, 0}, "x"};
    hetero_graph g = {sizeof(hetero_graph), HETERO_ABI_VERSION, 1, 0, &t, NULL};
    return (int)(g.n_tensors + t.ndim) + (int)HETERO_ABI_MAJOR_OF(HETERO_ABI_VERSION);
}
