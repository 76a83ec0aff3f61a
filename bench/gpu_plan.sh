#!/usr/bin/env bash
# The partition solver on a GPU machine: for each model, the plan the solver
# picks (a-priori costs, then measured profiles), and `hetero bench` of the
# default plan beside every single device, with predicted vs measured time
# per device (--trace).
# usage: bench/gpu_plan.sh HETERO_BIN [MODEL_DIR] [STAGE]
#   STAGE prior:   plans and benches with the a-priori cost model
#   STAGE profile: profiles every device (cached under $XDG_CACHE_HOME), then
#                  plans and benches again with the measured costs
# SHAPES (default "tinyllama-1.1b llama-7b") and TYPES (default "q4_0") pick
# the gen-model files; PROMPTS (default "512 4096") the prefill lengths;
# PROFILE_CONFIG a config for `hetero profile` alone (e.g. leaving out a slow
# OpenCL CPU device, which the plans then cost a priori); PROFILE_CTX a
# context for `hetero profile -c` (so that its grid reaches prompts longer
# than the model's own context); SKIP_CPU_LONG=1
# leaves out the cpu-only bench at prompts above 512.
set -uo pipefail
source "$(dirname "$0")/shape_args.sh"
hetero=$1
models=${2:-/tmp/hetero-models}
stage=${3:-prior}
mkdir -p "$models"
echo "== machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; nproc; date -u
"$hetero" providers
for shape in ${SHAPES:-tinyllama-1.1b llama-7b}; do
  for t in ${TYPES:-q4_0}; do
    m=$models/$shape-$t.gguf
    [[ -f $m ]] || { echo "== gen-model $shape $t"; "$hetero" gen-model "$m" $(shape_args "$shape") --type "$t" >/dev/null; }
    if [[ $stage == profile ]]; then
      echo "== profile $shape $t"; /usr/bin/time -f "profile wall %e s" "$hetero" profile ${PROFILE_CONFIG:+--config "$PROFILE_CONFIG"} ${PROFILE_CTX:+-c "$PROFILE_CTX"} -m "$m" --max-tokens "${PROFILE_MAX_TOKENS:-4096}" 2>&1 | grep -E "saved|held-out|error|wall"
    fi
    for p in ${PROMPTS:-512 4096}; do
      echo "== plan $shape $t prompt $p"; "$hetero" plan -m "$m" --prompt-len "$p" -n 128 2>&1 | grep -vE "^  (prefill|decode) layer" | head -20
      for prov in ${BENCH_PROVIDERS:-default cpu opencl vulkan}; do
        args=(); [[ $prov != default ]] && args=(--providers "$prov")
        [[ $prov == cpu && $p -gt 512 && -n ${SKIP_CPU_LONG:-} ]] && continue
        echo "== bench $shape $t pp$p $prov"
        "$hetero" bench -m "$m" "${args[@]}" -p "$p" -n $([[ $p == 512 ]] && echo 128 || echo 0) -r $([[ $p == 512 ]] && echo 3 || echo 1) --trace /tmp/trace.json 2>&1 \
          | grep -E "^\||executables|error" | grep -v "^|---"
      done
    done
  done
done
