#!/usr/bin/env bash
# The calibration probe as a user meets it: the first plan of a quantized
# model probes the cpu provider and says so; the next one reads the stored
# fit; HETERO_CALIBRATE=off plans with the bare prior; a corrupt calibration
# file is named and measured again; a bad HETERO_CALIBRATE value is refused;
# plan and run -v show the single-device candidates the plan was chosen from.
# `hetero profile` without --providers measures only devices a plan could
# use and names each one it leaves out; run --profile auto profiles in the
# background.
# Usage: plan_defaults_test.sh HETERO_BINARY
set -uo pipefail
hetero="$1"
source "$(dirname "$0")/check_lib.sh"
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
m="$tmp/tiny-q4_0.gguf"
"$hetero" gen-model --shape tiny --type q4_0 "$m" >/dev/null 2>&1; check "gen-model tiny q4_0" $?

HETERO_CALIBRATE=probe "$hetero" plan -m "$m" --providers cpu >"$tmp/out1" 2>&1; rc=$?
check "first plan runs" $rc
grep -q '^note: cpu:0 calibrated in' "$tmp/out1"; check "first plan probes the cpu and says so" $?
grep -q 'prior calibrated by a probe' "$tmp/out1"; check "first plan uses the probe" $?
files=("$XDG_CACHE_HOME"/hetero/calibration/cpu-*-q4_0-*.json)
[[ -s ${files[0]} ]]; check "the fit is stored under the cache" $?
! ls "$XDG_CACHE_HOME"/hetero/calibration | grep -q '\.gguf'; check "the probe model is removed" $?

HETERO_CALIBRATE=probe "$hetero" plan -m "$m" --providers cpu >"$tmp/out2" 2>&1
! grep -q 'calibrated in' "$tmp/out2" && grep -q 'prior calibrated by a probe' "$tmp/out2"; check "second plan reads the stored fit" $?
HETERO_CALIBRATE=cached "$hetero" plan -m "$m" --providers cpu >"$tmp/cached" 2>&1
grep -q 'prior calibrated by a probe' "$tmp/cached"; check "cached reads it too" $?
HETERO_CALIBRATE=off "$hetero" plan -m "$m" --providers cpu >"$tmp/off" 2>&1
grep -q 'prior (roofline' "$tmp/off"; check "off plans with the bare prior" $?

echo '{"format": "hetero-calibration", "version": 1, "key": {' >"${files[0]}"
HETERO_CALIBRATE=probe "$hetero" plan -m "$m" --providers cpu >"$tmp/out3" 2>&1
grep -q "calibration ${files[0]} is not valid.*ignoring it" "$tmp/out3" && grep -q '^note: cpu:0 calibrated in' "$tmp/out3"
check "a corrupt file is named and measured again" $?

HETERO_CALIBRATE=sometimes "$hetero" plan -m "$m" --providers cpu >"$tmp/out4" 2>&1; rc=$?
[[ $rc != 0 ]] && grep -q "HETERO_CALIBRATE='sometimes'" "$tmp/out4"; check "a bad HETERO_CALIBRATE is refused by name" $?

# The candidates a plan was chosen from: each device alone, predicted.
if "$hetero" providers 2>/dev/null | grep -q "provider npu_emu"; then  # built with the NPU emulation
  HETERO_CALIBRATE=off "$hetero" plan -m "$m" --providers cpu,npu_emu >"$tmp/out6" 2>&1
  grep -qE '^  cpu:0 +prefill .* decode .*<- chosen' "$tmp/out6" && grep -qE '^  npu_emu:0 +cannot run the model alone' "$tmp/out6"
  check "plan lists each device alone, the chosen one marked" $?
fi
HETERO_CALIBRATE=off "$hetero" run -m "$m" --providers cpu -p hi -n 2 -v >/dev/null 2>"$tmp/out7"
grep -q '^each device alone' "$tmp/out7"; check "run -v lists them too" $?

# profile: every device found is either measured or named as left out, the cpu measured.
HETERO_CALIBRATE=off "$hetero" profile -m "$m" --max-tokens 16 >"$tmp/prof" 2>"$tmp/prof.err"; rc=$?
[[ $rc == 0 ]] && grep -qE '^cpu:0 .*measured [0-9]+ op families' "$tmp/prof"; check "profile measures the cpu" $?
HETERO_CALIBRATE=off "$hetero" plan -m "$m" >"$tmp/devs" 2>&1
ok=0
for d in $(grep -oE '^  [a-z_]+:[0-9]+' "$tmp/devs" | tr -d ' '); do
  n=$(grep -cE "^$d (\(.*\): measured|not profiled: predicted [0-9]+x)" "$tmp/prof")
  [[ $n == 1 ]] || { echo "  $d: $n lines in profile's output"; ok=1; }
done
check "profile names each device once: measured or left out, with why" $ok

# run --profile auto: the answer first, then a detached profile of the used
# device; a later run plans with it.
XDG_CACHE_HOME="$tmp/bg" HETERO_CALIBRATE=off "$hetero" run -m "$m" --providers cpu -p hi -n 2 --profile auto >/dev/null 2>"$tmp/bg.err"; rc=$?
[[ $rc == 0 ]] && grep -q '^note: profiling cpu:0 in the background (pid [0-9]*, log ' "$tmp/bg.err"; check "run --profile auto starts a background profile after the answer" $?
for i in $(seq 120); do ls "$tmp"/bg/hetero/profiles/cpu-*.json >/dev/null 2>&1 && break; sleep 0.5; done
sleep 0.5
XDG_CACHE_HOME="$tmp/bg" HETERO_CALIBRATE=off "$hetero" run -m "$m" --providers cpu -p hi -n 2 --profile auto >/dev/null 2>"$tmp/bg2.err"
grep -q 'predicted (cpu:0: profile ' "$tmp/bg2.err" && ! grep -q 'in the background' "$tmp/bg2.err"
check "the next run plans with that profile and starts none" $?

# The shipped f32 model is a small reference model: never probed.
HETERO_CALIBRATE=probe "$hetero" plan --providers cpu >"$tmp/out5" 2>&1
! grep -q 'calibrat' "$tmp/out5"; check "the f32 default model is not probed" $?
exit $fail
