#!/usr/bin/env bash
# Runs the conformance kit against the CPU provider on every kernel path:
#   natively for each `isa` option (paths the CPU lacks must be refused cleanly),
#   under qemu-x86_64 -cpu max (AVX2 without AVX-512),
#   under qemu-x86_64 -cpu Nehalem (no AVX: the scalar path),
#   and the aarch64 cross build under qemu-aarch64 (NEON and scalar);
#   then the block-type matmul tiles of every table directly, with activations
#   on the int8 grid (bin/hetero_cpu_kernels_test), natively and under
#   qemu-x86_64 -cpu max and qemu-aarch64.
#
# usage: tests/cpu/run_isa_matrix.sh BUILD_DIR AARCH64_BUILD_DIR
# Each BUILD_DIR must hold bin/hetero-conformance, bin/hetero_cpu_kernels_test
# and lib/hetero/plugins/libhetero-ep-cpu.so. Exits non-zero if any run fails.
set -u -o pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 BUILD_DIR AARCH64_BUILD_DIR" >&2
    exit 2
fi
BUILD=$1
ARM_BUILD=$2
PLUGIN_REL=lib/hetero/plugins/libhetero-ep-cpu.so
THREADS=${HETERO_TEST_THREADS:-2}
# The arm64 C library: Debian's multiarch one where it is installed (the
# runtime's libraries come with it; mixing its libc with the cross
# toolchain's loader hangs at the first thread), else the cross toolchain's.
if [[ -z ${AARCH64_SYSROOT:-} ]]; then
    if [[ -e /lib/ld-linux-aarch64.so.1 ]]; then AARCH64_SYSROOT=/; else AARCH64_SYSROOT=/usr/aarch64-linux-gnu; fi
fi

failures=()
runs=0

for f in "$BUILD/bin/hetero-conformance" "$BUILD/$PLUGIN_REL" "$ARM_BUILD/bin/hetero-conformance" "$ARM_BUILD/$PLUGIN_REL" \
    "$BUILD/bin/hetero_cpu_kernels_test" "$ARM_BUILD/bin/hetero_cpu_kernels_test"; do
    if [[ ! -f $f ]]; then
        echo "FATAL: $f is missing (build hetero-conformance and hetero-ep-cpu first)" >&2
        exit 2
    fi
done
for tool in qemu-x86_64 qemu-aarch64; do
    if ! command -v "$tool" >/dev/null; then
        echo "FATAL: $tool not found (apt-get install qemu-user)" >&2
        exit 2
    fi
done

# run_labelled LABEL TAIL_LINES COMMAND...: counts and announces one run,
# sets $log (its output) and $rc (its exit status), shows its last lines.
run_labelled() {
    local label=$1 lines=$2
    shift 2
    runs=$((runs + 1))
    echo "=== $label"
    log=$("$@" 2>&1)
    rc=$?
    echo "$log" | tail -n "$lines"
}

# expect_pass LABEL EXPECTED_KERNELS COMMAND...: the run must pass every case
# and report EXPECTED_KERNELS as its kernel path.
expect_pass() {
    local label=$1 kernels=$2
    shift 2
    run_labelled "$label" 3 "$@"
    if [[ $rc -ne 0 ]]; then
        echo "!!! FAILED: $label (exit $rc)"
        echo "$log" | grep -E 'FAIL|mismatch|error' | head -n 20
        failures+=("$label: exit $rc")
    elif ! grep -q "$kernels kernels" <<<"$log"; then
        echo "!!! FAILED: $label ran, but not on the $kernels kernels"
        failures+=("$label: wrong kernel path")
    fi
}

# expect_refusal LABEL COMMAND...: the plugin must refuse to start with a
# message (exit 2 from the runner), not crash and not run.
expect_refusal() {
    local label=$1
    shift
    run_labelled "$label" 1 "$@"
    if [[ $rc -ne 2 ]] || ! grep -q "did not start" <<<"$log"; then
        echo "!!! FAILED: $label should have been refused cleanly (exit $rc)"
        failures+=("$label: not refused cleanly")
    fi
}

conf="$BUILD/bin/hetero-conformance"
plugin="$BUILD/$PLUGIN_REL"
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { grep -qw "$1" <<<"$flags"; }

# --- native: every isa option --------------------------------------------
case $(uname -m) in
x86_64)
    if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
        best=avx512
        if has avx512_vnni; then best=avx512-vnni; fi
    elif has avx2 && has fma && has f16c; then
        best=avx2
    else
        best=scalar
    fi
    expect_pass "native isa=auto" "$best" "$conf" "$plugin" --option isa=auto --option threads="$THREADS"
    expect_pass "native isa=scalar" scalar "$conf" "$plugin" --option isa=scalar --option threads="$THREADS"
    if has avx2 && has fma && has f16c; then
        expect_pass "native isa=avx2" avx2 "$conf" "$plugin" --option isa=avx2 --option threads="$THREADS"
    else
        expect_refusal "native isa=avx2 (CPU lacks AVX2)" "$conf" "$plugin" --option isa=avx2
    fi
    if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
        avx512_kernels=avx512
        if has avx512_vnni; then avx512_kernels=avx512-vnni; fi
        expect_pass "native isa=avx512" "$avx512_kernels" "$conf" "$plugin" --option isa=avx512 --option threads="$THREADS"
        expect_pass "native isa=avx512-novnni" avx512 "$conf" "$plugin" --option isa=avx512-novnni --option threads="$THREADS"
    else
        expect_refusal "native isa=avx512 (CPU lacks AVX-512)" "$conf" "$plugin" --option isa=avx512
    fi
    # One odd thread count, so work splits unevenly.
    expect_pass "native isa=auto threads=3" "$best" "$conf" "$plugin" --option threads=3
    ;;
*)
    echo "(native runs skipped: host is $(uname -m), the x86-64 build runs under qemu only)"
    ;;
esac

# --- qemu-x86_64 -cpu max: AVX2/FMA/F16C, no AVX-512 ----------------------
# The long attention cases (caches of up to 4,097 rows, about 2 minutes a
# run under qemu) run natively on the x86 tables above and under qemu on
# NEON only, the one table no native run reaches.
expect_pass "qemu-x86_64 -cpu max isa=auto" avx2 qemu-x86_64 -cpu max "$conf" "$plugin" --option threads="$THREADS" --exclude _long
expect_refusal "qemu-x86_64 -cpu max isa=avx512" qemu-x86_64 -cpu max "$conf" "$plugin" --option isa=avx512

# --- qemu-x86_64 -cpu Nehalem: SSE4.2 only, the scalar path ---------------
expect_pass "qemu-x86_64 -cpu Nehalem isa=auto" scalar qemu-x86_64 -cpu Nehalem "$conf" "$plugin" --option threads="$THREADS" --exclude _long
expect_refusal "qemu-x86_64 -cpu Nehalem isa=avx2" qemu-x86_64 -cpu Nehalem "$conf" "$plugin" --option isa=avx2

# --- aarch64 cross build under qemu-aarch64 -------------------------------
arm_conf="$ARM_BUILD/bin/hetero-conformance"
arm_plugin="$ARM_BUILD/$PLUGIN_REL"
expect_pass "qemu-aarch64 isa=auto" neon qemu-aarch64 -L "$AARCH64_SYSROOT" "$arm_conf" "$arm_plugin" --option threads="$THREADS"
expect_pass "qemu-aarch64 isa=scalar" scalar qemu-aarch64 -L "$AARCH64_SYSROOT" "$arm_conf" "$arm_plugin" --option isa=scalar --option threads="$THREADS" --exclude _long
expect_refusal "qemu-aarch64 isa=avx2" qemu-aarch64 -L "$AARCH64_SYSROOT" "$arm_conf" "$arm_plugin" --option isa=avx2

# --- the block-type tiles directly (every table the CPU runs) ------------
expect_kernels() {
    local label=$1
    shift
    run_labelled "$label" 1 "$@"
    if [[ $rc -ne 0 ]]; then
        echo "!!! FAILED: $label (exit $rc)"
        echo "$log" | grep FAIL | head -n 20
        failures+=("$label: exit $rc")
    fi
}
if [[ $(uname -m) == x86_64 ]]; then
    expect_kernels "kernel tiles, native" "$BUILD/bin/hetero_cpu_kernels_test"
fi
expect_kernels "kernel tiles, qemu-x86_64 -cpu max (scalar, avx2)" qemu-x86_64 -cpu max "$BUILD/bin/hetero_cpu_kernels_test" scalar avx2
expect_kernels "kernel tiles, qemu-aarch64 (scalar, neon)" qemu-aarch64 -L "$AARCH64_SYSROOT" "$ARM_BUILD/bin/hetero_cpu_kernels_test"

# --- the runtime under qemu-aarch64: x86's greedy tokens -----------------
# The default model through the whole aarch64 runtime (libhetero, the CLI,
# the cpu provider on NEON) must write what the x86 build writes.
if [[ -x "$ARM_BUILD/bin/hetero" && -x "$BUILD/bin/hetero" ]]; then
    runs=$((runs + 1))
    echo "=== qemu-aarch64 hetero run (greedy tokens against x86)"
    run_args=(run --providers cpu --threads "$THREADS" -p "Once upon a time" -n 48 --temp 0 -q)
    x86_text=$("$BUILD/bin/hetero" "${run_args[@]}" 2>&1)
    x86_rc=$?
    # No plugin probe: under qemu-user the probe, an aarch64 program, cannot
    # be started as a child process (the host kernel cannot exec it).
    arm_text=$(HETERO_PLUGIN_PROBE=0 qemu-aarch64 -L "$AARCH64_SYSROOT" "$ARM_BUILD/bin/hetero" "${run_args[@]}" 2>&1)
    arm_rc=$?
    echo "$arm_text" | tail -n 2
    if [[ $x86_rc -ne 0 || $arm_rc -ne 0 || -z $arm_text || "$arm_text" != "$x86_text" ]]; then
        echo "!!! FAILED: aarch64 hetero run (exit $arm_rc) wrote other text than x86 (exit $x86_rc):"
        echo "    x86:     $x86_text"
        echo "    aarch64: $arm_text"
        failures+=("qemu-aarch64 hetero run: not x86's tokens")
    fi
else
    echo "(no aarch64 hetero CLI in $ARM_BUILD: the runtime check is skipped)"
fi

echo
if [[ ${#failures[@]} -ne 0 ]]; then
    echo "ISA MATRIX FAILED: ${#failures[@]} of $runs runs"
    for f in "${failures[@]}"; do echo "  - $f"; done
    exit 1
fi
echo "ISA matrix passed: $runs runs"
