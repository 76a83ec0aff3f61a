// Shared by every shader: the per-executable meta buffer (error flag), the
// push-constant block (with each operand's byte offset inside its descriptor
// range, so no shader starts with a dependent memory read), and index helpers.
#extension GL_KHR_shader_subgroup_basic : enable

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

// Large dispatches use a 2-D grid because one dimension stops at 65535 groups.
uint flat_group() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }
// A macro so gl_WorkGroupSize is the specialised size declared after this file.
#define flat_invocation() (flat_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x)
