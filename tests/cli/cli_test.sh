#!/usr/bin/env bash
# End-to-end checks of the hetero CLI as a user meets it.
# Usage: cli_test.sh HETERO_BINARY SHARED_MODELS_DIR
set -uo pipefail
hetero="$1"
shared="$2"
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [[ "$2" == 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$hetero" --version | grep -q '^hetero [0-9]'; check "--version" $?
"$hetero" --help | grep -q 'run'; check "--help lists run" $?
"$hetero" run --help | grep -q -- '--temp'; check "run --help" $?

"$hetero" run --no-such-flag >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc != 0 && $(wc -l <"$tmp/err") -le 2 ]] && grep -q 'no-such-flag' "$tmp/err"; check "unknown flag: one-line error, non-zero exit" $?

"$hetero" run -m /nonexistent/model.gguf >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc != 0 ]] && grep -q '/nonexistent/model.gguf' "$tmp/err"; check "missing model file is named" $?

echo "not a model" >"$tmp/bad.gguf"
"$hetero" run -m "$tmp/bad.gguf" >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc != 0 ]] && grep -q 'bad.gguf' "$tmp/err"; check "garbage model file is refused with its name" $?

"$hetero" run --providers nosuchprovider -n 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc != 0 ]] && grep -q "nosuchprovider" "$tmp/err" && grep -q "searched plugin directories" "$tmp/err"
check "unknown provider: says where it looked" $?

echo '{"providers": [{"name": "cpu", "thread": 2}]}' >"$tmp/cfg.json"
"$hetero" run --config "$tmp/cfg.json" -n 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc != 0 ]] && grep -q "providers\[0\].thread" "$tmp/err" && grep -q "cfg.json" "$tmp/err"; check "bad config key is named" $?

"$hetero" providers --json >"$tmp/p.json"; rc=$?
[[ $rc == 0 ]] && python3 -c "import json,sys; d=json.load(open('$tmp/p.json')); assert any(p.get('provider')=='cpu' and p['loaded'] for p in d['plugins'])"
check "providers --json lists the cpu provider" $?

# A provider without devices (an OpenCL platform filter matching nothing)
# still loads, is listed with the reason, and is left out of the plan.
if python3 -c "import json,sys; d=json.load(open('$tmp/p.json')); sys.exit(0 if any(p.get('provider')=='opencl' and p['loaded'] for p in d['plugins']) else 1)"; then
  echo '{"providers": [{"name": "opencl", "options": {"platform": "no such platform"}}, {"name": "cpu"}]}' >"$tmp/nodev.json"
  "$hetero" providers --config "$tmp/nodev.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [[ $rc == 0 ]] && grep -q "opencl.*loaded, no devices: .*no such platform" "$tmp/out"
  check "provider without devices: providers gives the reason" $?
  "$hetero" run --config "$tmp/nodev.json" -p "Once upon a time" -n 4 --temp 0 >"$tmp/out" 2>"$tmp/err"; rc=$?
  [[ $rc == 0 ]] && grep -q "not using provider opencl: no devices: .*no such platform" "$tmp/err" && grep -q "^cpu:0" "$tmp/err" &&
    ! grep -q "^opencl:" "$tmp/err"
  check "provider without devices: left out of the plan with its reason" $?
fi

# Greedy text of the default model = llama2.c's reference text (first line).
expected=$(awk '/^Text printed:/{f=1; next} f && /^```/{if (++n == 2) exit; next} f && n == 1' "$shared/README.md" | head -c 120)
"$hetero" run --providers cpu -p "Once upon a time" -n 40 --temp 0 -q >"$tmp/out" 2>"$tmp/err"; rc=$?
got=$(head -c 120 "$tmp/out")
[[ $rc == 0 && -n "$expected" && "$got" == "${expected:0:${#got}}" && ${#got} -ge 100 ]]; check "default model greedy text matches llama2.c" $?
[[ $fail == 0 ]] || { echo "expected: $expected"; echo "got:      $got"; cat "$tmp/err"; }

# The converter round trip: llama2.c checkpoint -> GGUF -> same greedy text.
"$hetero" convert llama2c "$shared/stories260K.bin" "$shared/tok512.bin" "$tmp/conv.gguf" >/dev/null 2>&1; rc=$?
check "convert llama2c" $rc
"$hetero" run -m "$tmp/conv.gguf" --providers cpu -p "Once upon a time" -n 40 --temp 0 -q >"$tmp/out2" 2>/dev/null
cmp -s "$tmp/out" "$tmp/out2"; check "converted model gives the same text" $?

# The profiler measures, caches and shows (in a private cache directory).
XDG_CACHE_HOME="$tmp/cache" "$hetero" profile --providers cpu --max-tokens 32 >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc == 0 ]] && grep -q "saved $tmp/cache/hetero/profiles/.*\.json" "$tmp/out" && grep -q "held-out error" "$tmp/out"
check "profile measures and saves" $?
XDG_CACHE_HOME="$tmp/cache" "$hetero" profile --show --providers cpu >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc == 0 ]] && grep -q "^cpu:0" "$tmp/out" && grep -q "^ *matmul .* n: 1:" "$tmp/out"
check "profile --show prints the device and its matmul families" $?

exit $fail
