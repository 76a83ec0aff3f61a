#!/usr/bin/env bash
# Every architecture on opencl and vulkan (where a device is found) prints the
# greedy tokens of the cpu alone: with the solver's own placement (layers
# whose ops a provider lacks stay on the cpu) and with every matmul split
# between the cpu and the other device (the cpu then computes as the GPU
# providers do, llama_act_grids 0, and is compared with itself alone in that
# mode: a split mixes both sides' products). The architectures whose layers need
# the ABI 1.2 ops (gemma2, llama3, qwen3) also run on the other provider
# alone: its plan places nothing on the cpu, and it prints the cpu's tokens.
# Usage: cross_provider.sh HETERO_BINARY [ARCH...]
set -uo pipefail
hetero="$1"
shift
archs=("$@")
[[ ${#archs[@]} == 0 ]] && archs=(llama llama3 llama-linear mistral qwen2 qwen3 phi3 gemma2 gemma3)
fail=0
check() { if [[ "$2" == 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$hetero" providers --json >"$tmp/p.json" 2>/dev/null
others=()
for other in opencl vulkan; do
  python3 -c "import json,sys; d=json.load(open('$tmp/p.json')); sys.exit(0 if any(p.get('provider')=='$other' and p['loaded'] and p.get('devices') for p in d['plugins']) else 1)" 2>/dev/null &&
    others+=("$other")
done
if [[ ${#others[@]} == 0 ]]; then
  echo "SKIP: neither an opencl nor a vulkan device is available"
  exit 77
fi
run() { "$hetero" run -p "Once upon a time" -n 24 --temp 0 --cache-type f32 -c 128 "$@"; }
for arch in "${archs[@]}"; do
  layers=2
  [[ $arch == gemma3 ]] && layers=6
  for type in f32 q8_0; do
    m="$tmp/$arch-$type.gguf"
    "$hetero" gen-model "$m" --shape tiny --layers $layers --arch "$arch" --type $type --seed 7 >/dev/null 2>&1 || { check "$arch $type: gen-model" 1; continue; }
    run -m "$m" --providers cpu -q >"$tmp/cpu" 2>/dev/null || { check "$arch $type: cpu run" 1; continue; }
    echo '{"providers": [{"name": "cpu", "options": {"llama_act_grids": 0}}]}' >"$tmp/cpu_exact.json"
    run -m "$m" --config "$tmp/cpu_exact.json" -q >"$tmp/cpu_exact" 2>/dev/null || { check "$arch $type: cpu run (llama_act_grids 0)" 1; continue; }
    for other in "${others[@]}"; do
      run -m "$m" --providers "$other,cpu" >"$tmp/out" 2>"$tmp/err"; rc=$?
      [[ $rc == 0 ]] && cmp -s "$tmp/cpu" "$tmp/out"
      check "$arch $type on $other,cpu (solver's placement): cpu's tokens" $?
      echo "{\"providers\": [{\"name\": \"cpu\", \"options\": {\"llama_act_grids\": 0}}, {\"name\": \"$other\"}], \"plan\": {\"split\": [{\"layers\": \"all\", \"devices\": [\"cpu:0\", \"$other:0\"], \"ratio\": [1, 1]}]}}" >"$tmp/split.json"
      run -m "$m" --config "$tmp/split.json" -q >"$tmp/out" 2>"$tmp/err"; rc=$?
      [[ $rc == 0 ]] && cmp -s "$tmp/cpu_exact" "$tmp/out"
      check "$arch $type with every matmul split between cpu and $other: cpu's tokens" $?
      [[ $rc == 0 ]] || tail -3 "$tmp/err"
      case $arch in
        gemma2 | llama3 | qwen3)
          "$hetero" plan -m "$m" -c 128 --providers "$other" --json >"$tmp/plan.json" 2>"$tmp/err"; rc=$?
          [[ $rc == 0 ]] && python3 - "$tmp/plan.json" "$other" <<'PY'
import json, re, sys
plan, other = json.load(open(sys.argv[1])), sys.argv[2]
# Every device label the plan names ("provider:index": devices, layer
# homes, splits) belongs to the provider under test.
def labels(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from labels(x)
    elif isinstance(v, list):
        for x in v:
            yield from labels(x)
    elif isinstance(v, str) and re.fullmatch(r"[a-z_]+:[0-9]+", v):
        yield v
named = list(labels(plan))
homes = [l.get("home") for l in plan.get("layers", [])]
sys.exit(0 if named and homes and all(d.startswith(other + ":") for d in named) else 1)
PY
          check "$arch $type: plan on $other alone places no layer on the cpu" $?
          run -m "$m" --providers "$other" -q >"$tmp/out" 2>"$tmp/err"; rc=$?
          [[ $rc == 0 ]] && cmp -s "$tmp/cpu" "$tmp/out"
          check "$arch $type on $other alone: cpu's tokens" $?
          [[ $rc == 0 ]] || tail -3 "$tmp/err"
          ;;
      esac
    done
  done
done
exit $fail
