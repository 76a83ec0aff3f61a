/*
 * A template execution provider in plain C99, against the C ABI alone
 * (hetero/ep_api.h): no SDK, no C++. One CPU device computing on host
 * memory; it runs ADD and MUL on f32 tensors (b the same shape as a, or one
 * row [D] applied to every row) and refuses every other op in op_supported.
 *
 * It shows what the C++ SDK otherwise does for a provider: the function
 * table, a per-thread error message, graph and binding checks, buffer range
 * checks and the device-props size rules. docs/writing-a-provider.md
 * (installed in share/doc/hetero/) explains each rule.
 *
 * Copy this directory, rename the provider (PROVIDER_NAME and CMakeLists.txt),
 * then replace run_node with calls into your device.
 */
#include <hetero/ep_api.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROVIDER_NAME "example_c" /* [a-z0-9_]+, the <name> of libhetero-ep-<name>.so */
#define PROVIDER_VERSION "0.1.0"

/* ------------------------------------------------------------- errors */

/* The message of the last failed call, per thread (the ABI's rule). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define EX_THREAD_LOCAL _Thread_local
#else
#define EX_THREAD_LOCAL __thread /* GCC and clang in C99 mode */
#endif
static EX_THREAD_LOCAL char g_error[256];

static const char* last_error(void) { return g_error; }

/* Stores the message and returns the status, so that `return fail(...)` reads well. */
static hetero_status fail(hetero_status status, const char* format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(g_error, sizeof g_error, format, args);
    va_end(args);
    return status;
}

/* ------------------------------------------------------------ objects */

typedef struct example_ep {
    int unused; /* a real provider keeps its driver handles and options here */
} example_ep;

typedef struct example_buffer {
    uint32_t device;
    uint64_t size;
    unsigned char* data;
    int owned; /* 0: imported host memory, not freed here */
} example_buffer;

typedef struct example_executable {
    uint32_t n_tensors, n_nodes;
    hetero_tensor_desc* tensors; /* copies: the caller may free its graph after compile */
    hetero_node* nodes;
    unsigned char** data;        /* per tensor: constants and internals set at compile, bound ones per execute */
    unsigned char** internal;    /* per tensor: owned memory of internal tensors */
} example_executable;

/* Executions finish before execute returns; every event is this one. */
static char g_done_event;

#define EP(p) ((example_ep*)(void*)(p))
#define BUF(p) ((example_buffer*)(void*)(p))
#define EXE(p) ((example_executable*)(void*)(p))

/* --------------------------------------------------------- validation */

static hetero_status check_device(uint32_t device) {
    return device == 0 ? HETERO_OK : fail(HETERO_ERR_INVALID_ARGUMENT, "device index %u out of range (provider has 1)", device);
}

/* Bytes of a tensor of a dtype this provider stores, 0 for any other. */
static uint64_t tensor_bytes(const hetero_tensor_desc* t) {
    uint64_t n = 1, elem;
    uint32_t i;
    switch (t->dtype) {
        case HETERO_DTYPE_F32:
        case HETERO_DTYPE_I32: elem = 4; break;
        default: return 0;
    }
    for (i = 0; i < t->ndim; ++i) n *= (uint64_t)t->shape[i];
    return n * elem;
}

static hetero_status check_tensor(const hetero_tensor_desc* t, uint32_t id) {
    uint32_t i;
    if (t->ndim < 1 || t->ndim > HETERO_MAX_DIMS) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u: ndim %u outside 1..4", id, t->ndim);
    for (i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 1) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u: extent %d is %lld", id, (int)i, (long long)t->shape[i]);
    if (t->dtype >= HETERO_DTYPE_COUNT_1_3) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u: unknown dtype %u", id, t->dtype);
    if (t->kind > HETERO_TENSOR_CONSTANT) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u: unknown kind %u", id, t->kind);
    return HETERO_OK;
}

static int same_shape(const hetero_tensor_desc* a, const hetero_tensor_desc* b) {
    uint32_t i;
    if (a->ndim != b->ndim) return 0;
    for (i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* Whether a node is well formed and one this provider runs. Malformed:
 * HETERO_ERR_INVALID_ARGUMENT; well formed but another op or dtype:
 * HETERO_ERR_UNSUPPORTED. Both with the reason in the message. */
static hetero_status check_node(const hetero_node* node, const hetero_tensor_desc* tensors, uint32_t n_tensors) {
    const hetero_tensor_desc *a, *b, *out;
    uint32_t i;
    hetero_status s;
    if (node->n_inputs > HETERO_MAX_INPUTS) return fail(HETERO_ERR_INVALID_ARGUMENT, "node has %u inputs (at most 4)", node->n_inputs);
    for (i = 0; i < node->n_inputs; ++i)
        if (node->inputs[i] < 0 || (uint32_t)node->inputs[i] >= n_tensors)
            return fail(HETERO_ERR_INVALID_ARGUMENT, "input %u names tensor %d outside the graph", i, node->inputs[i]);
    if (node->output < 0 || (uint32_t)node->output >= n_tensors)
        return fail(HETERO_ERR_INVALID_ARGUMENT, "output names tensor %d outside the graph", node->output);
    for (i = 0; i < node->n_inputs; ++i)
        if ((s = check_tensor(&tensors[node->inputs[i]], (uint32_t)node->inputs[i])) != HETERO_OK) return s;
    if ((s = check_tensor(&tensors[node->output], (uint32_t)node->output)) != HETERO_OK) return s;
    if (node->op != HETERO_OP_ADD && node->op != HETERO_OP_MUL)
        return fail(HETERO_ERR_UNSUPPORTED, "op %u is not implemented by this provider (only add and mul)", node->op);
    if (node->n_inputs != 2) return fail(HETERO_ERR_INVALID_ARGUMENT, "add/mul takes 2 inputs, got %u", node->n_inputs);
    a = &tensors[node->inputs[0]];
    b = &tensors[node->inputs[1]];
    out = &tensors[node->output];
    if (a->dtype != HETERO_DTYPE_F32 || b->dtype != HETERO_DTYPE_F32 || out->dtype != HETERO_DTYPE_F32)
        return fail(HETERO_ERR_INVALID_ARGUMENT, "add/mul: inputs and output must be f32");
    if (!same_shape(a, b) && !(b->ndim == 1 && b->shape[0] == a->shape[a->ndim - 1]))
        return fail(HETERO_ERR_INVALID_ARGUMENT, "add/mul: b must have a's shape or be [D]");
    if (!same_shape(a, out)) return fail(HETERO_ERR_INVALID_ARGUMENT, "add/mul: the output must have a's shape");
    return HETERO_OK;
}

/* A buffer range [offset, offset + size) inside the buffer. */
static hetero_status check_range(const example_buffer* b, uint64_t offset, uint64_t size, const char* what) {
    if (!b) return fail(HETERO_ERR_INVALID_ARGUMENT, "%s: null buffer", what);
    if (offset > b->size || size > b->size - offset)
        return fail(HETERO_ERR_INVALID_ARGUMENT, "%s: range [%llu, +%llu) outside a buffer of %llu bytes", what,
                    (unsigned long long)offset, (unsigned long long)size, (unsigned long long)b->size);
    return HETERO_OK;
}

/* Resolves the bindings of every tensor of `kind` into exe->data: each bound
 * exactly once, inside its buffer, on this device. */
static hetero_status bind(example_executable* exe, uint32_t kind, const hetero_binding* bindings, size_t n) {
    size_t i;
    uint32_t t;
    hetero_status s;
    if (n && !bindings) return fail(HETERO_ERR_INVALID_ARGUMENT, "bindings array is null");
    for (t = 0; t < exe->n_tensors; ++t)
        if (exe->tensors[t].kind == kind) exe->data[t] = NULL;
    for (i = 0; i < n; ++i) {
        const hetero_binding* b = &bindings[i];
        example_buffer* buf = BUF(b->buffer);
        if (b->tensor < 0 || (uint32_t)b->tensor >= exe->n_tensors)
            return fail(HETERO_ERR_INVALID_ARGUMENT, "binding %zu names tensor %d outside the graph", i, b->tensor);
        t = (uint32_t)b->tensor;
        if (exe->tensors[t].kind != kind) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u is bound here but is of another kind", t);
        if (exe->data[t]) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u is bound twice", t);
        if ((s = check_range(buf, b->offset, tensor_bytes(&exe->tensors[t]), "binding")) != HETERO_OK) return s;
        if (buf->device != 0) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u is bound to a buffer of another device", t);
        exe->data[t] = buf->data + b->offset;
    }
    for (t = 0; t < exe->n_tensors; ++t)
        if (exe->tensors[t].kind == kind && !exe->data[t]) return fail(HETERO_ERR_INVALID_ARGUMENT, "tensor %u is not bound", t);
    return HETERO_OK;
}

/* ------------------------------------------------------------ kernels */

static void run_node(const example_executable* exe, const hetero_node* node) {
    const hetero_tensor_desc* ad = &exe->tensors[node->inputs[0]];
    const hetero_tensor_desc* bd = &exe->tensors[node->inputs[1]];
    const float* a = (const float*)(const void*)exe->data[node->inputs[0]];
    const float* b = (const float*)(const void*)exe->data[node->inputs[1]];
    float* out = (float*)(void*)exe->data[node->output];
    const uint64_t count = tensor_bytes(ad) / sizeof(float), b_count = tensor_bytes(bd) / sizeof(float);
    uint64_t e;
    if (node->op == HETERO_OP_ADD)
        for (e = 0; e < count; ++e) out[e] = a[e] + b[e % b_count];
    else
        for (e = 0; e < count; ++e) out[e] = a[e] * b[e % b_count];
}

/* ------------------------------------------------------- the ABI table */

static hetero_status create(const hetero_option* options, size_t n_options, hetero_ep** out) {
    example_ep* ep;
    if (!out) return fail(HETERO_ERR_INVALID_ARGUMENT, "out is null");
    if (n_options) /* options come from the config; refuse unknown keys by name */
        return fail(HETERO_ERR_INVALID_ARGUMENT, "unknown option '%s' for provider " PROVIDER_NAME " (known: none)",
                    options && options[0].key ? options[0].key : "(null)");
    ep = (example_ep*)calloc(1, sizeof *ep);
    if (!ep) return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
    *out = (hetero_ep*)(void*)ep;
    return HETERO_OK;
}

static void destroy(hetero_ep* ep) { free(EP(ep)); }

static uint32_t device_count(hetero_ep* ep) {
    (void)ep;
    return 1;
}

static hetero_status device_props(hetero_ep* ep, uint32_t device, hetero_device_props* props) {
    hetero_device_props full;
    uint32_t want;
    hetero_status s;
    (void)ep;
    if ((s = check_device(device)) != HETERO_OK) return s;
    if (!props || props->struct_size < offsetof(hetero_device_props, name))
        return fail(HETERO_ERR_INVALID_ARGUMENT, "props is null or its struct_size too small");
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.abi_version = HETERO_ABI_VERSION;
    full.kind = HETERO_DEVICE_CPU;
    full.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;
    snprintf(full.name, sizeof full.name, "%s", "example_c device (host CPU, f32 add/mul)");
    snprintf(full.driver, sizeof full.driver, "%s", "hetero C template provider " PROVIDER_VERSION);
    snprintf(full.resource, sizeof full.resource, "%s", "host");
    full.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32);
    full.compute_units = 1;
    /* A caller built for an older minor passes a smaller struct: fill only
     * its bytes, and say how many were filled. */
    want = props->struct_size;
    memcpy(props, &full, want < sizeof full ? want : sizeof full);
    props->struct_size = want < sizeof full ? want : (uint32_t)sizeof full;
    return HETERO_OK;
}

static hetero_status op_supported(hetero_ep* ep, uint32_t device, const hetero_node* node, const hetero_tensor_desc* tensors,
                                  uint32_t n_tensors, double* est_seconds) {
    hetero_status s;
    (void)ep;
    if (est_seconds) *est_seconds = -1.0; /* no estimate */
    if ((s = check_device(device)) != HETERO_OK) return s;
    if (!node || !tensors) return fail(HETERO_ERR_INVALID_ARGUMENT, "null node or tensors");
    return check_node(node, tensors, n_tensors);
}

static hetero_status buffer_alloc(hetero_ep* ep, uint32_t device, uint64_t size, hetero_buffer** out) {
    example_buffer* b;
    hetero_status s;
    (void)ep;
    if ((s = check_device(device)) != HETERO_OK) return s;
    if (!out || size == 0) return fail(HETERO_ERR_INVALID_ARGUMENT, "buffer_alloc needs a size and out");
    b = (example_buffer*)calloc(1, sizeof *b);
    if (b) b->data = (unsigned char*)malloc((size_t)size);
    if (!b || !b->data) {
        free(b);
        return fail(HETERO_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes", (unsigned long long)size);
    }
    b->device = device;
    b->size = size;
    b->owned = 1;
    *out = (hetero_buffer*)(void*)b;
    return HETERO_OK;
}

static hetero_status buffer_import_host(hetero_ep* ep, uint32_t device, void* ptr, uint64_t size, hetero_buffer** out) {
    example_buffer* b;
    hetero_status s;
    (void)ep;
    if ((s = check_device(device)) != HETERO_OK) return s;
    if (!ptr || !out || size == 0) return fail(HETERO_ERR_INVALID_ARGUMENT, "import_host needs a pointer, a size and out");
    b = (example_buffer*)calloc(1, sizeof *b);
    if (!b) return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
    b->device = device;
    b->size = size;
    b->data = (unsigned char*)ptr; /* no copy: the caller keeps the memory alive until release */
    *out = (hetero_buffer*)(void*)b;
    return HETERO_OK;
}

static void* buffer_host_ptr(hetero_ep* ep, hetero_buffer* buffer) {
    (void)ep;
    return buffer ? BUF(buffer)->data : NULL;
}

static hetero_status buffer_write(hetero_ep* ep, hetero_buffer* dst, uint64_t offset, const void* src, uint64_t size) {
    hetero_status s;
    (void)ep;
    if ((s = check_range(BUF(dst), offset, size, "buffer_write")) != HETERO_OK) return s;
    if (size && !src) return fail(HETERO_ERR_INVALID_ARGUMENT, "buffer_write: null source");
    if (size) memmove(BUF(dst)->data + offset, src, (size_t)size);
    return HETERO_OK;
}

static hetero_status buffer_read(hetero_ep* ep, hetero_buffer* src, uint64_t offset, void* dst, uint64_t size) {
    hetero_status s;
    (void)ep;
    if ((s = check_range(BUF(src), offset, size, "buffer_read")) != HETERO_OK) return s;
    if (size && !dst) return fail(HETERO_ERR_INVALID_ARGUMENT, "buffer_read: null destination");
    if (size) memmove(dst, BUF(src)->data + offset, (size_t)size);
    return HETERO_OK;
}

static hetero_status buffer_copy(hetero_ep* ep, hetero_buffer* src, uint64_t src_offset, hetero_buffer* dst, uint64_t dst_offset,
                                 uint64_t size) {
    hetero_status s;
    (void)ep;
    if ((s = check_range(BUF(src), src_offset, size, "buffer_copy source")) != HETERO_OK) return s;
    if ((s = check_range(BUF(dst), dst_offset, size, "buffer_copy destination")) != HETERO_OK) return s;
    if (size) memmove(BUF(dst)->data + dst_offset, BUF(src)->data + src_offset, (size_t)size);
    return HETERO_OK;
}

static void buffer_release(hetero_ep* ep, hetero_buffer* buffer) {
    (void)ep;
    if (!buffer) return;
    if (BUF(buffer)->owned) free(BUF(buffer)->data);
    free(BUF(buffer));
}

static void executable_release(hetero_ep* ep, hetero_executable* exe_handle) {
    example_executable* exe = EXE(exe_handle);
    uint32_t t;
    (void)ep;
    if (!exe) return;
    if (exe->internal)
        for (t = 0; t < exe->n_tensors; ++t) free(exe->internal[t]);
    free(exe->internal);
    free(exe->data);
    free(exe->nodes);
    free(exe->tensors);
    free(exe);
}

/* Checks the whole graph (the core only sends nodes op_supported accepted, so
 * a node this provider does not run makes the graph invalid here), copies it,
 * resolves the constants and allocates the internal tensors. */
static hetero_status compile(hetero_ep* ep, uint32_t device, const hetero_graph* graph, const hetero_binding* constants,
                             size_t n_constants, hetero_executable** out) {
    example_executable* exe;
    unsigned char* written;
    uint32_t t, n, i;
    hetero_status s;
    if ((s = check_device(device)) != HETERO_OK) return s;
    if (!graph || !out) return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: null graph or out");
    if (graph->struct_size < sizeof(hetero_graph)) return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: graph struct_size %u too small", graph->struct_size);
    if (HETERO_ABI_MAJOR_OF(graph->abi_version) != HETERO_ABI_VERSION_MAJOR)
        return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: graph built for ABI major %u", HETERO_ABI_MAJOR_OF(graph->abi_version));
    if (graph->n_tensors == 0 || !graph->tensors || (graph->n_nodes && !graph->nodes))
        return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: empty or null tensor or node array");
    for (t = 0; t < graph->n_tensors; ++t)
        if ((s = check_tensor(&graph->tensors[t], t)) != HETERO_OK) return s;
    written = (unsigned char*)calloc(graph->n_tensors, 1);
    if (!written) return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
    for (n = 0; n < graph->n_nodes; ++n) {
        const hetero_node* node = &graph->nodes[n];
        if ((s = check_node(node, graph->tensors, graph->n_tensors)) != HETERO_OK) {
            char reason[sizeof g_error];
            memcpy(reason, g_error, sizeof reason);
            free(written);
            /* UNSUPPORTED too: op_supported refuses the node, so it is not one to compile */
            return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: node %u: %s", n, reason);
        }
        for (i = 0; i < node->n_inputs; ++i)
            if (graph->tensors[node->inputs[i]].kind == HETERO_TENSOR_INTERNAL && !written[node->inputs[i]]) {
                free(written);
                return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: node %u reads internal tensor %d before any node writes it", n,
                            node->inputs[i]);
            }
        if (graph->tensors[node->output].kind == HETERO_TENSOR_CONSTANT) {
            free(written);
            return fail(HETERO_ERR_INVALID_ARGUMENT, "compile: node %u writes constant tensor %d", n, node->output);
        }
        written[node->output] = 1;
    }
    free(written);

    exe = (example_executable*)calloc(1, sizeof *exe);
    if (!exe) return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
    exe->n_tensors = graph->n_tensors;
    exe->n_nodes = graph->n_nodes;
    exe->tensors = (hetero_tensor_desc*)malloc(graph->n_tensors * sizeof(hetero_tensor_desc));
    exe->nodes = (hetero_node*)malloc((graph->n_nodes ? graph->n_nodes : 1) * sizeof(hetero_node));
    exe->data = (unsigned char**)calloc(graph->n_tensors, sizeof(unsigned char*));
    exe->internal = (unsigned char**)calloc(graph->n_tensors, sizeof(unsigned char*));
    if (!exe->tensors || !exe->nodes || !exe->data || !exe->internal) {
        executable_release(ep, (hetero_executable*)(void*)exe);
        return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    memcpy(exe->tensors, graph->tensors, graph->n_tensors * sizeof(hetero_tensor_desc));
    if (graph->n_nodes) memcpy(exe->nodes, graph->nodes, graph->n_nodes * sizeof(hetero_node));
    for (t = 0; t < exe->n_tensors; ++t) exe->tensors[t].name = NULL; /* names are the caller's memory */
    for (t = 0; t < exe->n_tensors; ++t) {
        if (exe->tensors[t].kind != HETERO_TENSOR_INTERNAL) continue;
        exe->internal[t] = (unsigned char*)malloc((size_t)(tensor_bytes(&exe->tensors[t]) ? tensor_bytes(&exe->tensors[t]) : 1));
        if (!exe->internal[t]) {
            executable_release(ep, (hetero_executable*)(void*)exe);
            return fail(HETERO_ERR_OUT_OF_MEMORY, "out of host memory");
        }
        exe->data[t] = exe->internal[t];
    }
    if ((s = bind(exe, HETERO_TENSOR_CONSTANT, constants, n_constants)) != HETERO_OK) {
        executable_release(ep, (hetero_executable*)(void*)exe);
        return s;
    }
    *out = (hetero_executable*)(void*)exe;
    return HETERO_OK;
}

/* Runs synchronously: when the caller asks for an event it gets one that has
 * already completed. */
static hetero_status execute(hetero_ep* ep, hetero_executable* exe_handle, const hetero_binding* bindings, size_t n_bindings,
                             hetero_event** event) {
    example_executable* exe = EXE(exe_handle);
    uint32_t n;
    hetero_status s;
    (void)ep;
    if (event) *event = NULL;
    if (!exe) return fail(HETERO_ERR_INVALID_ARGUMENT, "execute: null executable");
    if ((s = bind(exe, HETERO_TENSOR_BOUND, bindings, n_bindings)) != HETERO_OK) return s;
    for (n = 0; n < exe->n_nodes; ++n) run_node(exe, &exe->nodes[n]);
    if (event) *event = (hetero_event*)(void*)&g_done_event;
    return HETERO_OK;
}

static hetero_status event_wait(hetero_ep* ep, hetero_event* event) {
    (void)ep;
    return event ? HETERO_OK : fail(HETERO_ERR_INVALID_ARGUMENT, "event_wait: null event");
}

static void event_release(hetero_ep* ep, hetero_event* event) {
    (void)ep;
    (void)event; /* the one static event: nothing to free */
}

/* Filled by name, so that two entries of the same type cannot swap places. */
static const hetero_ep_api g_api = {
    .struct_size = sizeof(hetero_ep_api),
    .abi_version = HETERO_ABI_VERSION,
    .name = PROVIDER_NAME,
    .version = PROVIDER_VERSION,
    .last_error = last_error,
    .create = create,
    .destroy = destroy,
    .device_count = device_count,
    .device_props = device_props,
    .op_supported = op_supported,
    .buffer_alloc = buffer_alloc,
    .buffer_import_host = buffer_import_host,
    .buffer_host_ptr = buffer_host_ptr,
    .buffer_write = buffer_write,
    .buffer_read = buffer_read,
    .buffer_copy = buffer_copy,
    .buffer_release = buffer_release,
    .compile = compile,
    .executable_release = executable_release,
    .execute = execute,
    .event_wait = event_wait,
    .event_release = event_release,
    .event_seconds = NULL, /* since 1.1: this provider does not time its executions */
};

/* The plugin's one exported symbol. */
HETERO_EP_EXPORT const hetero_ep_api* hetero_ep_init(const hetero_host_api* host, uint32_t host_abi_version, const char** reason) {
    (void)host; /* host->log (thread-safe) is there for messages */
    if (HETERO_ABI_MAJOR_OF(host_abi_version) != HETERO_ABI_VERSION_MAJOR) {
        if (reason) *reason = "the core speaks another ABI major version";
        return NULL;
    }
    return &g_api;
}
