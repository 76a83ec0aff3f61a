/*
 * hetero execution-provider C ABI.
 *
 * This header is the whole contract between libhetero (the "core") and an
 * execution provider (a plugin named libhetero-ep-<name>.so). It is C99, has no
 * dependencies beyond <stddef.h>/<stdint.h>, and is safe to include from C++.
 *
 * Versioning
 *   HETERO_ABI_VERSION = (major << 16) | minor. The core refuses a plugin built
 *   for another major version. Within one major version every table and
 *   descriptor is append-only: new fields and functions go at the end, and the
 *   reader checks `struct_size` before touching a field added in a later minor
 *   (HETERO_HAS_FIELD).
 *   Each function says the minor it first appeared in ("since 1.0").
 *
 * Errors
 *   Functions return hetero_status. On failure the provider stores a message
 *   that `last_error()` returns on the same thread; a provider never aborts the
 *   process on bad input and never lets a C++ exception cross this boundary.
 *
 * Threads
 *   Unless a function says otherwise, calls on one hetero_ep instance may come
 *   from several threads, but never concurrently for the same executable or
 *   buffer.
 *
 * Tensors
 *   Dense, contiguous, row-major; shape[0] is the outermost dimension, so a
 *   matrix of R rows and C columns is {R, C}. Quantized types (Q8_0, Q4_0)
 *   store blocks of 32 consecutive elements of the innermost dimension with
 *   exactly GGUF's bit layout; the innermost extent must be a multiple of 32.
 *   Where an op below says "[N, K] (rows)", the operand may have 2 to 4
 *   dimensions and is read as shape[0] rows of the product of the others, so a
 *   matmul can write [N, H, Hd] straight into RoPE without a reshape.
 */
#ifndef HETERO_EP_API_H
#define HETERO_EP_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HETERO_ABI_VERSION_MAJOR 1u
#define HETERO_ABI_VERSION_MINOR 3u
#define HETERO_ABI_VERSION ((HETERO_ABI_VERSION_MAJOR << 16) | HETERO_ABI_VERSION_MINOR)
#define HETERO_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)
#define HETERO_ABI_MINOR_OF(v) ((uint32_t)(v)&0xffffu)

/* Name of the one symbol every plugin exports (type hetero_ep_init_fn). */
#define HETERO_EP_ENTRY_SYMBOL "hetero_ep_init"

#if defined(_WIN32)
#define HETERO_EP_EXPORT __declspec(dllexport)
#else
#define HETERO_EP_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ status */

typedef enum hetero_status {
    HETERO_OK = 0,
    HETERO_ERR_INVALID_ARGUMENT = 1, /* malformed graph, shape, binding or option */
    HETERO_ERR_UNSUPPORTED = 2,      /* op, dtype or feature not provided */
    HETERO_ERR_OUT_OF_MEMORY = 3,    /* host or device allocation failed */
    HETERO_ERR_DEVICE_LOST = 4,      /* the device stopped answering */
    HETERO_ERR_COMPILE_FAILED = 5,   /* kernel/shader/graph build failed */
    HETERO_ERR_ABI_MISMATCH = 6,     /* caller speaks an incompatible ABI */
    HETERO_ERR_INTERNAL = 7          /* anything else; the message says what */
} hetero_status;

/* ------------------------------------------------------------------ dtypes */

typedef enum hetero_dtype {
    HETERO_DTYPE_F32 = 0,
    HETERO_DTYPE_F16 = 1,  /* IEEE binary16 */
    HETERO_DTYPE_BF16 = 2, /* bfloat16 */
    HETERO_DTYPE_Q8_0 = 3, /* 32 x int8 + one f16 scale: 34 bytes / block */
    HETERO_DTYPE_Q4_0 = 4, /* 32 x 4-bit (offset 8) + one f16 scale: 18 bytes / block */
    HETERO_DTYPE_I32 = 5,
    HETERO_DTYPE_I8 = 6,
    HETERO_DTYPE_COUNT_1_0 = 7, /* number of dtypes defined in ABI 1.0 */
    /* GGUF's K-quants: super-blocks of 256 elements, rows a multiple of 256.
     * A provider computes with them only when its dtype_mask says so; the
     * core never hands one to a device that does not advertise it. */
    HETERO_DTYPE_Q4_K = 7, /* f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of 4-bit quants:
                              144 bytes / 256. since 1.1 */
    HETERO_DTYPE_Q5_K = 8, /* Q4_K plus 32 bytes of fifth bits: 176 bytes / 256. since 1.1 */
    HETERO_DTYPE_Q6_K = 9, /* 128 bytes low 4 bits, 64 bytes high 2 bits, 16 int8 scales, f16 d:
                              210 bytes / 256. since 1.1 */
    HETERO_DTYPE_COUNT_1_1 = 10, /* number of dtypes defined in ABI 1.1 */
    /* More of GGUF's block types, with the same dtype_mask rule as the K-quants. */
    HETERO_DTYPE_Q4_1 = 10,   /* f16 d, f16 m, 16 bytes of 4-bit quants (value d*q + m): 20 bytes / 32. since 1.2 */
    HETERO_DTYPE_Q5_0 = 11,   /* f16 d, 4 bytes of fifth bits, 16 bytes of nibbles (value d*(q-16)): 22 bytes / 32. since 1.2 */
    HETERO_DTYPE_Q5_1 = 12,   /* f16 d, f16 m, 4 bytes of fifth bits, 16 bytes of nibbles (d*q + m): 24 bytes / 32. since 1.2 */
    HETERO_DTYPE_IQ4_NL = 13, /* f16 d, 16 bytes of 4-bit indices into a fixed 16-entry int8 table: 18 bytes / 32. since 1.2 */
    HETERO_DTYPE_Q2_K = 14,   /* 16 bytes of 4-bit scales/mins, 64 bytes of 2-bit quants, f16 d, f16 dmin:
                                 84 bytes / 256. since 1.2 */
    HETERO_DTYPE_Q3_K = 15,   /* 32 bytes of high bits, 64 bytes of 2-bit quants, 12 bytes of 6-bit scales, f16 d:
                                 110 bytes / 256. since 1.2 */
    HETERO_DTYPE_COUNT_1_2 = 16, /* number of dtypes defined in ABI 1.2 */
    /* Types of hetero's own (GGUF type ids of their own: docs/models.md). */
    HETERO_DTYPE_E0M4 = 16, /* FP4 with no exponent bits: f16 d, f16 b, 16 bytes of 4-bit fractions q (element j low
                               nibble of byte j, j + 16 high): value d * (w - b) with w = 2 + q / 8, the f32 whose
                               bits are 0x40000000 | q << 19 (two bit operations): 20 bytes / 32. since 1.3 */
    HETERO_DTYPE_COUNT_1_3 = 17 /* number of dtypes defined in ABI 1.3 */
} hetero_dtype;

/* Bit i set = dtype i supported; used in hetero_device_props.dtype_mask. */
#define HETERO_DTYPE_BIT(d) (1ull << (unsigned)(d))

/* --------------------------------------------------------------------- ops */

/*
 * The op set. Numbers are stable; new ops are appended. For every op the
 * inputs are listed in order ("in0", "in1", ...); "out" is the node's output.
 * n = rows (tokens), all float math in f32 unless the dtype says otherwise.
 */
typedef enum hetero_op {
    /* in0 table [V, D] (F32/F16/BF16/Q8_0/Q4_0; Q4_K/Q5_K/Q6_K since 1.1;
     * Q4_1/Q5_0/Q5_1/IQ4_NL/Q2_K/Q3_K since 1.2; E0M4 since 1.3), in1 ids [N] I32 -> out [N, D] F32.
     * Out-of-range ids are an execution error. since 1.0 */
    HETERO_OP_EMBEDDING = 1,
    /* in0 x [N, K] (rows) F32, in1 W [M, K] (F32/F16/BF16/Q8_0/Q4_0; Q4_K/Q5_K/Q6_K since 1.1;
     * Q4_1/Q5_0/Q5_1/IQ4_NL/Q2_K/Q3_K since 1.2; E0M4 since 1.3), optional in2 bias [M] F32
     * -> out [N, M] (rows) F32 = x * W^T (+ bias). Providers may quantize x on the fly
     * (e.g. to Q8_0 blocks) for quantized W. since 1.0 */
    HETERO_OP_MATMUL = 2,
    /* in0 x [N, D] F32, in1 weight [D] F32 -> out [N, D]:
     * out = x / sqrt(mean(x^2) + eps) * weight. fparams[0] = eps. x may have
     * more dimensions ([N, H, Hd] with weight [Hd]): every innermost row is
     * normalised on its own (per-head norms). since 1.0 */
    HETERO_OP_RMSNORM = 3,
    /* in0 x [N, H, Hd] F32, in1 positions [N] I32 -> out [N, H, Hd].
     * Rotates pairs by angle pos * base^(-2i/rot_dims) for pair i < rot_dims/2.
     * fparams[0] = base (theta); iparams[0] = mode (HETERO_ROPE_*);
     * iparams[1] = rot_dims (0 = Hd; must be even and <= Hd). since 1.0 */
    HETERO_OP_ROPE = 4,
    /* Causal attention over a KV cache.
     * in0 q [N, H, Hd] F32, in1 k_cache [C, Hkv, Hd] (F32/F16), in2 v_cache [C, Hkv, Hd]
     * (F32/F16), in3 positions [N] I32 -> out [N, H, Hd] F32.
     * Query row i attends to cache rows 0..positions[i] inclusive; query head h
     * uses KV head h / (H / Hkv) (H must be a multiple of Hkv).
     * fparams[0] = scale (usually 1/sqrt(Hd)). since 1.0 */
    HETERO_OP_ATTENTION = 5,
    /* in0 gate [N, F] F32, in1 up [N, F] F32 -> out [N, F] = silu(gate) * up. since 1.0 */
    HETERO_OP_SWIGLU = 6,
    /* in0 a [N, D] F32, in1 b: [N, D] or [D] (broadcast over rows) F32 -> out = a + b. since 1.0 */
    HETERO_OP_ADD = 7,
    /* in0 x [N, D] F32 -> out [N, D]: softmax over the last dimension of
     * x * fparams[0] (scale; 0 means 1). since 1.0 */
    HETERO_OP_SOFTMAX = 8,
    /* in0 x [..., D] of any float/quantized dtype -> out same shape, other dtype
     * (F32 <-> F16/BF16/Q8_0/Q4_0). Quantization rounds as GGUF's reference does.
     * since 1.0 */
    HETERO_OP_CONVERT = 9,
    /* in0 src [N, D] (rows) F32, in1 positions [N] I32 -> out cache [C, D] (rows) (F32/F16):
     * out[positions[i], :] = src[i, :]; all other rows of out keep their
     * contents (out must be a bound tensor, usually a KV cache). A position
     * outside [0, C) is an execution error. since 1.0 */
    HETERO_OP_STORE_ROWS = 10,
    /* in0 a [N, D] F32, in1 b: [N, D] or [D] F32 -> out = a * b. since 1.0 */
    HETERO_OP_MUL = 11,
    HETERO_OP_COUNT_1_0 = 12, /* ops 1..11 exist in ABI 1.0 */
    /* ROPE with scaled frequencies: in0 x [N, H, Hd] F32, in1 positions [N] I32,
     * optional in2 freq_factors [rot_dims/2] F32 -> out [N, H, Hd]. Pair i turns by
     * pos * freq_scale * base^(-2i/rot_dims) / freq_factors[i] (Llama 3's
     * per-frequency factors; linear scaling is freq_scale = 1/factor).
     * fparams[0] = base; fparams[1] = freq_scale (0 means 1); iparams as ROPE.
     * since 1.2 */
    HETERO_OP_ROPE_SCALED = 12,
    /* ATTENTION with a sliding window and logit soft-capping; inputs, output
     * and fparams[0] (scale) as ATTENTION. iparams[0] = window W (0 = none):
     * query row i attends to cache rows max(0, positions[i] - W + 1)..positions[i].
     * fparams[1] = soft-cap c (0 = none): each score s = scale * q.k becomes
     * c * tanh(s / c) before the softmax. since 1.2 */
    HETERO_OP_ATTENTION_EXT = 13,
    /* in0 gate [N, F] F32, in1 up [N, F] F32 -> out [N, F] = gelu(gate) * up, with
     * GELU's tanh form 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))). since 1.2 */
    HETERO_OP_GEGLU = 14,
    /* in0 x [N, D] F32 -> out [N, D] = c * tanh(x / c), c = fparams[0] > 0. since 1.2 */
    HETERO_OP_SOFTCAP = 15,
    HETERO_OP_COUNT_1_2 = 16, /* ops 1..15 exist in ABI 1.2 */
    /* Attention of rows from several sequences whose caches are stacked in
     * one tensor: a decode step of many streams in one node.
     * in0 q [N, H, Hd] F32, in1 k_cache [S*C, Hkv, Hd] (F32/F16), in2 v_cache
     * (as k_cache), in3 cache_rows [N] I32 -> out [N, H, Hd] F32.
     * iparams[1] = C > 0, the cache rows of one sequence (S*C must be a
     * multiple of it). Query row i is sequence s = cache_rows[i] / C at
     * position p = cache_rows[i] % C and attends to cache rows s*C .. s*C + p.
     * iparams[0] = window W (0 = none; else rows from s*C + max(0, p-W+1)),
     * fparams[0] = scale, fparams[1] = soft-cap (0 = none), as ATTENTION_EXT.
     * The same cache_rows, as STORE_ROWS positions, write each row's K and V
     * into the stack. since 1.3 */
    HETERO_OP_ATTENTION_SEQS = 16,
    HETERO_OP_COUNT_1_3 = 17 /* ops 1..16 exist in ABI 1.3 */
} hetero_op;

typedef enum hetero_rope_mode {
    HETERO_ROPE_ADJACENT = 0, /* pairs (x[2i], x[2i+1]); llama / GGUF "normal" */
    HETERO_ROPE_HALVES = 1    /* pairs (x[i], x[i + rot_dims/2]); NeoX / Qwen2 */
} hetero_rope_mode;

#define HETERO_MAX_DIMS 4
#define HETERO_MAX_INPUTS 4

/* --------------------------------------------------------------- tensors */

typedef enum hetero_tensor_kind {
    /* Provider-owned scratch; lives inside the executable. */
    HETERO_TENSOR_INTERNAL = 0,
    /* Bound at every execute (activations in/out, token ids, positions, KV cache). */
    HETERO_TENSOR_BOUND = 1,
    /* Bound once at compile and never modified afterwards (weights). The
     * provider may pre-pack it; the buffer must outlive the executable. */
    HETERO_TENSOR_CONSTANT = 2
} hetero_tensor_kind;

typedef struct hetero_tensor_desc {
    uint32_t dtype; /* hetero_dtype */
    uint32_t kind;  /* hetero_tensor_kind */
    uint32_t ndim;  /* 1..HETERO_MAX_DIMS */
    uint32_t reserved;
    int64_t shape[HETERO_MAX_DIMS]; /* outermost first; entries >= ndim are ignored */
    const char* name;               /* optional, for messages and traces; may be NULL */
} hetero_tensor_desc;

/* One node of a graph. Tensor ids index hetero_graph.tensors. */
typedef struct hetero_node {
    uint32_t op;       /* hetero_op */
    uint32_t n_inputs; /* 0..HETERO_MAX_INPUTS */
    int32_t inputs[HETERO_MAX_INPUTS];
    int32_t output;
    int32_t reserved;
    float fparams[4];
    int64_t iparams[4];
} hetero_node;

/* A subgraph: nodes run in array order (a valid topological order). */
typedef struct hetero_graph {
    uint32_t struct_size; /* sizeof(hetero_graph) */
    uint32_t abi_version; /* HETERO_ABI_VERSION of the caller */
    uint32_t n_tensors;
    uint32_t n_nodes;
    const hetero_tensor_desc* tensors;
    const hetero_node* nodes;
} hetero_graph;

/* ------------------------------------------------------------- handles */

typedef struct hetero_ep hetero_ep;                 /* a provider instance */
typedef struct hetero_buffer hetero_buffer;         /* device memory */
typedef struct hetero_executable hetero_executable; /* a compiled subgraph */
typedef struct hetero_event hetero_event;           /* completion of one execute */

/* Binds a tensor of a graph to memory. */
typedef struct hetero_binding {
    int32_t tensor; /* tensor id in the graph */
    uint32_t reserved;
    hetero_buffer* buffer;
    uint64_t offset; /* bytes from the start of buffer */
} hetero_binding;

/* Provider-specific setting, e.g. {"threads", "4"}. */
typedef struct hetero_option {
    const char* key;
    const char* value;
} hetero_option;

/* ------------------------------------------------------------- devices */

typedef enum hetero_device_kind {
    HETERO_DEVICE_CPU = 0,
    HETERO_DEVICE_GPU = 1,
    HETERO_DEVICE_NPU = 2,
    HETERO_DEVICE_OTHER = 3
} hetero_device_kind;

#define HETERO_DEVICE_FLAG_UNIFIED_MEMORY 0x1u /* shares memory with the host */
#define HETERO_DEVICE_FLAG_STATIC_SHAPES 0x2u  /* compiles per shape; compile may be slow */
#define HETERO_DEVICE_FLAG_SIMULATED_TIME 0x4u /* reported times come from a model */

typedef struct hetero_device_props {
    uint32_t struct_size; /* set by the caller to sizeof(its struct) */
    uint32_t abi_version;
    uint32_t kind;  /* hetero_device_kind */
    uint32_t flags; /* HETERO_DEVICE_FLAG_* */
    char name[128];
    char driver[128];          /* driver / ISA / backend description */
    uint64_t memory_bytes;     /* usable memory, 0 = unknown */
    uint64_t dtype_mask;       /* HETERO_DTYPE_BIT() of weight dtypes it computes with */
    double peak_gflops;        /* f32 FMA peak hint, 0 = unknown */
    double peak_bandwidth_gbs; /* memory bandwidth hint, 0 = unknown */
    uint32_t compute_units;
    uint32_t subgroup_size; /* 0 = n/a */

    /* ---- since 1.1 (a 1.0 struct ends here: struct_size == offsetof(resource)) ---- */

    /* The physical resource the device computes on, NUL-terminated; "" =
     * unknown. Devices with equal non-empty strings (from one provider or
     * several) share compute units and memory bandwidth, so running them at
     * once does not add their throughput. Convention: "host" for anything
     * executing on the host CPU's cores (a CPU provider, an OpenCL CPU
     * device such as PoCL's, a software Vulkan device such as lavapipe);
     * for a GPU, "gpu:" + its UUID as 32 lowercase hex digits where the API
     * gives one (OpenCL cl_khr_device_uuid, Vulkan
     * VkPhysicalDeviceIDProperties::deviceUUID: equal for the OpenCL and
     * Vulkan views of one GPU on drivers that follow the interop rules),
     * else "gpu:pci:" + PCI domain:bus:device.function, else "gpu:" + vendor
     * id + ":" + device name; other devices the same with "device:" for
     * "gpu:". since 1.1 */
    char resource[64];
    /* Host seconds of one execute + event_wait round trip of a trivial
     * executable on an idle device (submission, launch, completion); 0 =
     * unknown. since 1.1 */
    double launch_seconds_hint;
    /* One-off seconds this device spends before the first executable of a
     * typical model runs (program builds, pipeline creation), taking the
     * provider's on-disk caches as they are now into account; 0 = negligible
     * or unknown. since 1.1 */
    double compile_seconds_hint;
    /* Tokens per forward pass the device's graphs are built for (a
     * static-shape device: one graph per shape, shared across chunks and
     * layers); the host cuts prompts into chunks of this many tokens when the
     * device runs part of a model; 0 = any. since 1.1 */
    uint32_t chunk_tokens;
} hetero_device_props;

/* Whether a struct the other side returned covers `field` (for fields added
 * in a later minor version): e.g.
 * HETERO_HAS_FIELD(hetero_device_props, &props, resource). since 1.1 */
#define HETERO_HAS_FIELD(type, ptr, field) \
    ((size_t)(ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------ host side */

typedef enum hetero_log_level {
    HETERO_LOG_DEBUG = 0,
    HETERO_LOG_INFO = 1,
    HETERO_LOG_WARN = 2,
    HETERO_LOG_ERROR = 3
} hetero_log_level;

/* Services the core offers to every provider. Valid until the plugin is unloaded. */
typedef struct hetero_host_api {
    uint32_t struct_size;
    uint32_t abi_version;
    void* host_ctx;
    /* Thread-safe. msg is copied before return. since 1.0 */
    void (*log)(void* host_ctx, int level, const char* provider, const char* msg);
} hetero_host_api;

/* --------------------------------------------------------- provider table */

typedef struct hetero_ep_api {
    uint32_t struct_size; /* sizeof(hetero_ep_api) the plugin was built with */
    uint32_t abi_version; /* HETERO_ABI_VERSION the plugin was built with */
    const char* name;     /* short provider name, e.g. "cpu"; [a-z0-9_]+ */
    const char* version;  /* provider's own version string */

    /* Message of the last failed call on this thread; never NULL. since 1.0 */
    const char* (*last_error)(void);

    /* Creates an instance with the given options. Unknown keys or bad values
     * fail with HETERO_ERR_INVALID_ARGUMENT naming the key. A provider may
     * leave device discovery (loading its driver) to the first call that
     * needs devices, so that loading plugins stays cheap; creating an
     * instance on a machine without the driver then succeeds. since 1.0 */
    hetero_status (*create)(const hetero_option* options, size_t n_options, hetero_ep** out);
    /* Releases the instance; every buffer/executable/event must be released first. since 1.0 */
    void (*destroy)(hetero_ep* ep);

    /* Devices of this instance; the first call of any function taking a
     * device may be the one that discovers them. The count does not change
     * afterwards. 0 means none (no driver, no platform, nothing matching the
     * options): last_error() then says why, and every function taking a
     * device fails with that reason. since 1.0 */
    uint32_t (*device_count)(hetero_ep* ep);
    /* Fills props (up to props->struct_size bytes) and sets
     * props->struct_size to the bytes it filled: the smaller of the caller's
     * size and its own sizeof(hetero_device_props). Read a field added in a
     * later minor only when HETERO_HAS_FIELD says the struct covers it; a
     * provider whose table says ABI 1.0 may leave struct_size as the caller
     * set it, so a newer caller treats its fields past 1.0 as unfilled.
     * since 1.0 */
    hetero_status (*device_props)(hetero_ep* ep, uint32_t device, hetero_device_props* props);

    /* Can `device` run `node` over these tensors? The descriptors are indexed by
     * node->inputs / node->output. est_seconds (may be NULL) receives an
     * estimate, or a negative value when it has none: seconds of the node as
     * one of an executable's nodes (its own dispatch included, the execute's
     * round trip, launch_seconds_hint, not). Returns HETERO_OK when
     * supported, HETERO_ERR_UNSUPPORTED with a reason otherwise. since 1.0 */
    hetero_status (*op_supported)(hetero_ep* ep, uint32_t device, const hetero_node* node,
                                  const hetero_tensor_desc* tensors, uint32_t n_tensors,
                                  double* est_seconds);

    /* Buffers. since 1.0 */
    hetero_status (*buffer_alloc)(hetero_ep* ep, uint32_t device, uint64_t size, hetero_buffer** out);
    /* Wraps host memory without a copy where the device can; otherwise
     * HETERO_ERR_UNSUPPORTED (the caller then allocates and writes). The memory
     * must stay valid and unmodified-by-others until release. */
    hetero_status (*buffer_import_host)(hetero_ep* ep, uint32_t device, void* ptr, uint64_t size,
                                        hetero_buffer** out);
    /* Host address of the buffer's bytes, or NULL when not host-visible. */
    void* (*buffer_host_ptr)(hetero_ep* ep, hetero_buffer* buffer);
    /* Blocking copies between host memory and a buffer / two buffers of this ep. */
    hetero_status (*buffer_write)(hetero_ep* ep, hetero_buffer* dst, uint64_t offset, const void* src,
                                  uint64_t size);
    hetero_status (*buffer_read)(hetero_ep* ep, hetero_buffer* src, uint64_t offset, void* dst,
                                 uint64_t size);
    hetero_status (*buffer_copy)(hetero_ep* ep, hetero_buffer* src, uint64_t src_offset,
                                 hetero_buffer* dst, uint64_t dst_offset, uint64_t size);
    void (*buffer_release)(hetero_ep* ep, hetero_buffer* buffer);

    /* Compiles a subgraph. `constants` binds every HETERO_TENSOR_CONSTANT tensor.
     * The graph and descriptors are copied; the caller may free them after. since 1.0 */
    hetero_status (*compile)(hetero_ep* ep, uint32_t device, const hetero_graph* graph,
                             const hetero_binding* constants, size_t n_constants,
                             hetero_executable** out);
    void (*executable_release)(hetero_ep* ep, hetero_executable* exe);

    /* Runs an executable; `bindings` binds every HETERO_TENSOR_BOUND tensor.
     * With event == NULL the call returns when the work is done; otherwise it
     * may return at once and *event completes later. Work submitted to one
     * device runs in submission order. since 1.0 */
    hetero_status (*execute)(hetero_ep* ep, hetero_executable* exe, const hetero_binding* bindings,
                             size_t n_bindings, hetero_event** event);
    /* Blocks until the event completes; returns the execution's status. since 1.0 */
    hetero_status (*event_wait)(hetero_ep* ep, hetero_event* event);
    void (*event_release)(hetero_ep* ep, hetero_event* event);

    /* ---- since 1.1 (read only when struct_size covers the field) ---- */

    /* Device seconds of a completed execute (after event_wait returned OK):
     * measured, or modelled on a device with HETERO_DEVICE_FLAG_SIMULATED_TIME,
     * when *flags gets HETERO_TIME_SIMULATED. HETERO_ERR_UNSUPPORTED when the
     * provider does not know. May be NULL. since 1.1 */
    hetero_status (*event_seconds)(hetero_ep* ep, hetero_event* event, double* device_seconds, uint32_t* flags);
} hetero_ep_api;

#define HETERO_TIME_SIMULATED 0x1u /* event_seconds: the time comes from a model */

/*
 * The entry point, exported as HETERO_EP_ENTRY_SYMBOL. `host` stays valid until
 * the plugin is unloaded; `host_abi_version` is the ABI the core speaks.
 * Returns the provider's static table, or NULL with *reason set to a static
 * message (e.g. unsupported CPU, incompatible major version).
 * Called once per load, from one thread. since 1.0
 */
typedef const hetero_ep_api* (*hetero_ep_init_fn)(const hetero_host_api* host, uint32_t host_abi_version,
                                                  const char** reason);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_EP_API_H */
