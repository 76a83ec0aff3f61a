#!/usr/bin/env bash
# Checks hetero's GGUF block types against ggml itself, using a llama.cpp
# peer built by tests/peer/setup_peer.sh (from npm packages):
#   1. tests/peer/ggml_bitexact.cpp, compiled against the peer's ggml headers
#      and libggml-base.so: every block type decodes bit for bit as ggml does.
#   2. llama-quantize turns an f32 `hetero gen-model` file into Q4_K_M,
#      Q5_K_M, Q3_K_M, Q2_K, Q4_1, Q5_0, Q5_1 and IQ4_NL files; each must
#      hold tensors of the expected type and generate with --providers cpu.
#   3. Each of those files on opencl and vulkan (where a device is found),
#      every layer and the head pinned there, scores a text as the cpu does
#      (llama_act_grids 0, the same arithmetic): top-1 agreement >= 99 % and
#      perplexity within 0.1 %. (Greedy tokens are no test here: the random
#      weights leave near ties that rounding order may tip.)
#
# usage: tests/peer/peer_test.sh SOURCE_DIR HETERO_CLI CXX WORK_DIR
# The peer goes to $HETERO_PEER_DIR if set (reused when it is already
# built there), else WORK_DIR/llama-peer. Exits 77 (ctest: skipped) with the
# reason when the peer cannot be built here (no npm, registry unreachable).
set -u -o pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 SOURCE_DIR HETERO_CLI CXX WORK_DIR" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
hetero=$2
cxx=$3
work=$4
mkdir -p "$work"
peer=${HETERO_PEER_DIR:-$work/llama-peer}
setup=$src/tests/peer/setup_peer.sh

skip() { echo "SKIPPED: $*"; exit 77; }

# The peer's ggml headers: src/ of setup_peer.sh (.work/src in peers built earlier).
peer_src() { if [[ -f $peer/src/ggml/include/ggml.h ]]; then echo "$peer/src"; else echo "$peer/.work/src"; fi; }
if [[ ! -f $peer/cpu/libggml-base.so || ! -x $peer/cpu/llama-quantize || ! -f $(peer_src)/ggml/include/ggml.h ]]; then
    echo "building the llama.cpp peer in $peer"
    "$setup" "$peer" >"$work/peer_setup.log" 2>&1
    rc=$?
    [[ $rc == 77 ]] && skip "no peer in $peer and none can be built here: $(tail -n 1 "$work/peer_setup.log")"
    [[ $rc == 0 ]] || { tail -n 20 "$work/peer_setup.log"; echo "FAIL: peer setup"; exit 1; }
fi

fail=0
check() { if [[ $2 -eq 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# 1. Bit-exact decoding.
"$cxx" -std=c++20 -O2 -Wall -Wextra -Werror -I"$src/sdk/include" -I"$src/plugin_api" -I"$(peer_src)/ggml/include" \
    "$src/tests/peer/ggml_bitexact.cpp" -o "$work/ggml_bitexact" -L"$peer/cpu" -l:libggml-base.so -Wl,-rpath,"$peer/cpu"
check "ggml_bitexact builds against the peer" $?
if [[ -x $work/ggml_bitexact ]]; then
    "$work/ggml_bitexact"
    check "every block type decodes as ggml's to_float does, bit for bit" $?
fi

# 2. Files written by llama-quantize load and generate on cpu.
f32=$work/peer_f32.gguf
"$hetero" gen-model "$f32" --shape tiny-k --type f32 --seed 7 >/dev/null
check "gen-model writes the f32 source model" $?
# llama-quantize's type name and a ggml tensor type the result must contain.
for pair in Q4_K_M:q4_K Q5_K_M:q5_K Q3_K_M:q3_K Q2_K:q2_K Q4_1:q4_1 Q5_0:q5_0 Q5_1:q5_1 IQ4_NL:iq4_nl; do
    qtype=${pair%%:*} tensor_type=${pair##*:}
    out=$work/peer_$qtype.gguf
    rm -f "$out"
    "$peer/cpu/llama-quantize" "$f32" "$out" "$qtype" >"$work/quantize_$qtype.log" 2>&1
    check "llama-quantize $qtype" $?
    grep -q "converting to $tensor_type" "$work/quantize_$qtype.log"
    check "$qtype holds $tensor_type tensors" $?
    "$hetero" run -m "$out" --providers cpu -p "Once upon a time" -n 8 --temp 0 -q >"$work/run_$qtype.out" 2>"$work/run_$qtype.err"
    rc=$?
    [[ $rc -eq 0 && -s $work/run_$qtype.out ]]
    check "hetero run --providers cpu loads and generates on $qtype" $?
    [[ $rc -eq 0 ]] || tail -n 5 "$work/run_$qtype.err"
done

# 3. The same files on the GPU providers.
"$hetero" providers --json >"$work/providers.json" 2>/dev/null
text=$src/models/text/tiny-stories-sample.txt
for other in opencl vulkan; do
    python3 -c "import json,sys; d=json.load(open('$work/providers.json')); sys.exit(0 if any(p.get('provider')=='$other' and p['loaded'] and p.get('devices') for p in d['plugins']) else 1)" 2>/dev/null ||
        { echo "skip $other: no device"; continue; }
    echo "{\"providers\": [{\"name\": \"cpu\", \"options\": {\"llama_act_grids\": 0}}, {\"name\": \"$other\"}],
      \"plan\": {\"pin\": [{\"layers\": \"all\", \"device\": \"$other:0\"}, {\"layers\": \"head\", \"device\": \"$other:0\"}]}}" >"$work/pin_$other.json"
    for qtype in Q4_K_M Q5_K_M Q3_K_M Q2_K Q4_1 Q5_0 Q5_1 IQ4_NL; do
        out=$work/peer_$qtype.gguf
        [[ -f $out ]] || continue
        "$hetero" perplexity -m "$out" -f "$text" --window 128 --config "$work/pin_$other.json" --reference cpu --cache-type f32 --json \
            >"$work/ppl_${other}_$qtype.json" 2>"$work/ppl_${other}_$qtype.err"
        rc=$?
        [[ $rc -eq 0 ]] && python3 - "$work/ppl_${other}_$qtype.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
agree, ppl, ref_ppl = r["top1_agreement"], r["perplexity"], r["reference_perplexity"]
print(f"  top-1 agreement {100 * agree:.2f} %, perplexity {ppl:.4f} against {ref_ppl:.4f}")
sys.exit(0 if agree >= 0.99 and abs(ppl - ref_ppl) <= 0.001 * ref_ppl else 1)
PY
        check "$qtype on $other scores the text as the cpu does" $?
        [[ $rc -eq 0 ]] || tail -n 3 "$work/ppl_${other}_$qtype.err"
    done
done

exit $fail
