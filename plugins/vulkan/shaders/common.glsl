// Shared by every shader: the per-executable meta buffer (error flag), the
// push-constant block (with each operand's byte offset inside its descriptor
// range, so no shader starts with a dependent memory read), and index helpers.
#extension GL_KHR_shader_subgroup_basic : enable
#include "hetero/sdk/block_layout.h"

// Bytes per block of each weight type (hetero/sdk/block_layout.h), as uint.
const uint Q4_0_BYTES = uint(HETERO_Q4_0_BYTES), Q4_1_BYTES = uint(HETERO_Q4_1_BYTES), Q5_0_BYTES = uint(HETERO_Q5_0_BYTES);
const uint Q5_1_BYTES = uint(HETERO_Q5_1_BYTES), Q8_0_BYTES = uint(HETERO_Q8_0_BYTES), Q2_K_BYTES = uint(HETERO_Q2_K_BYTES);
const uint Q3_K_BYTES = uint(HETERO_Q3_K_BYTES), Q4_K_BYTES = uint(HETERO_Q4_K_BYTES), Q5_K_BYTES = uint(HETERO_Q5_K_BYTES);
const uint Q6_K_BYTES = uint(HETERO_Q6_K_BYTES), E0M4_BYTES = uint(HETERO_E0M4_BYTES);

layout(std430, set = 0, binding = 0) buffer Meta {
    uint err_code;   // 0 = ok; set once by the first failing invocation
    uint err_node;   // node index of the failure
    uint err_value;  // offending id / position
    uint err_pad;
} meta;

layout(push_constant) uniform Push {
    uint node;
    uint t0, t1, t2, t3, t4;  // byte offsets of in0..in3 and out inside their bindings
    uint t5, t6;              // outputs 1 and 2 (multi-matvec only)
    uint t7;                  // in4 (a fused norm's weight)
    uint u[16];
    float f[4];
} pc;

#define ERR_BAD_ID 1u
#define ERR_BAD_POSITION 2u

void report_error(uint code, uint value) {
    if (atomicCompSwap(meta.err_code, 0u, code) == 0u) {
        meta.err_node = pc.node;
        meta.err_value = value;
    }
}

// ATTENTION_EXT (every attention shader): u[6] = window (0 = none), f[1] =
// soft-cap (0 = none); plain ATTENTION leaves both 0.
// tanh with a relative error near f32 rounding everywhere: implementations
// that build tanh from exp(2v) lose the small arguments to cancellation
// (lavapipe: 7e-8 absolute at 4e-4) and may overflow to inf / inf, so small
// |v| take the odd series (its next term is below 2e-9 relative) and the
// others 1 - 2 / (e^2|v| + 1) with |v| clamped (tanh(10) is 1 in f32).
float tanh_sat(float v) {
    float a = abs(v), r;
    if (a < 0.3) {
        float a2 = a * a;
        r = a * (1.0 + a2 * (-0.33333333 + a2 * (0.13333333 + a2 * (-0.053968254 + a2 * (0.021869489 + a2 * -0.0088632355)))));
    } else {
        r = 1.0 - 2.0 / (exp(2.0 * min(a, 10.0)) + 1.0);
    }
    return v < 0.0 ? -r : r;
}
int window_first(int p) { return pc.u[6] != 0u ? max(0, p - int(pc.u[6]) + 1) : 0; }
float soft_cap(float s) { return pc.f[1] > 0.0 ? pc.f[1] * tanh_sat(s / pc.f[1]) : s; }
// ATTENTION_SEQS (attention.comp, attention_basic.comp): u[8] = cache rows
// of one sequence of the stack (0 for the other attentions); the first row
// of the sequence that holds cache row p.
uint seq_base(int p) { return pc.u[8] != 0u ? uint(p) / pc.u[8] * pc.u[8] : 0u; }

// Large dispatches use a 2-D grid because one dimension stops at 65535 groups.
uint flat_group() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }
// A macro so gl_WorkGroupSize is the specialised size declared after this file.
#define flat_invocation() (flat_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x)
