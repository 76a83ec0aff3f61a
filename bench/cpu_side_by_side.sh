#!/usr/bin/env bash
# Side-by-side CPU measurement, in one run: the machine's read bandwidth
# (bench_bandwidth, the decode ceiling), then `hetero bench --providers cpu`
# against llama.cpp's CPU llama-bench on the same random-weight GGUFs, both
# on THREADS threads, engines alternating per round. The summary gives each
# decode figure as GB/s of weights streamed and as a share of the probe.
#
# usage: bench/cpu_side_by_side.sh HETERO_BUILD_DIR [LLAMA_CPU_DIR] [MODEL_DIR]
#   LLAMA_CPU_DIR holds llama.cpp's llama-bench (a peer's cpu/ folder); empty
#   or left out: the peer in HETERO_BUILD_DIR/peer, built there by
#   tests/peer/setup_peer.sh (from npm) when it is not there yet.
#   THREADS (default: all cores), SHAPES (default tinyllama-1.1b),
#   TYPES (default "q4_0 q8_0 q4_k"), ROUNDS (default 2), REPS (default 3),
#   PP (default 512), TG (default 64), CPU_OPTIONS (more cpu provider options
#   as JSON members, e.g. '"decode_streams":4'), DEPTH (default 0: tokens in
#   the KV cache before each test, both engines' -d), CACHE_TYPE (hetero's
#   --cache-type, default auto: f32 on the CPU; llama.cpp keeps its f16)
set -uo pipefail
source "$(dirname "$0")/shape_args.sh"
build=$1
peer=${2:-}
if [[ -z $peer ]]; then
  peer=$build/peer/cpu
  [[ -x $peer/llama-bench ]] || "$(dirname "$0")/../tests/peer/setup_peer.sh" "$build/peer" ||
    { echo "no llama.cpp peer in $build/peer and it could not be built" >&2; exit 1; }
fi
[[ -x $peer/llama-bench ]] || { echo "no llama-bench in $peer (tests/peer/setup_peer.sh DIR builds one in DIR/cpu)" >&2; exit 1; }
models=${3:-/tmp/hetero-models}
mkdir -p "$models"
hetero=$build/bin/hetero
threads=${THREADS:-$(nproc)}
pp=${PP:-512}
tg=${TG:-64}
depth=${DEPTH:-0}
at=""  # the tests' names after the depth, spaces dropped: pp512@d2048
((depth > 0)) && at="@d$depth"
config=$(mktemp)
echo "{\"providers\":[{\"name\":\"cpu\",\"options\":{\"threads\":$threads${CPU_OPTIONS:+,$CPU_OPTIONS}}}]}" >"$config"
results=$(mktemp)  # shape type engine test tok/s
run_out=$(mktemp)

echo "== machine"; lscpu | grep -E "^Model name|^CPU\(s\)|^Flags" | sed 's/^Flags:.*\(avx512[a-z_]*\).*/Flags: (AVX-512: yes)/'; date -u
echo "== read bandwidth, $threads threads"
"$build/bin/bench_bandwidth" --threads="$threads" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E "_mean|_median" | tee "$run_out"
probe=$(grep -E "2MiB_pages.*_median" "$run_out" | sed -n 's/.*GB\/s=\([0-9.]*\).*/\1/p' | head -1)
echo "probe: ${probe:-?} GB/s"

record() { # shape type engine
  awk -F'|' -v s="$1" -v t="$2" -v e="$3" '
    !tc { for (i = 1; i <= NF; i++) { h = $i; gsub(/ /, "", h); if (h == "test") tc = i; if (h == "t/s" || h == "tok/s") vc = i } next }
    $tc ~ /(pp|tg)[0-9]+/ { gsub(/ /, "", $tc); split($vc, a, " "); print s, t, e, $tc, a[1] }' "$run_out" >>"$results"
}

for shape in ${SHAPES:-tinyllama-1.1b}; do
  for t in ${TYPES:-q4_0 q8_0 q4_k}; do
    m=$models/$shape-$t.gguf
    [[ -f $m ]] || { echo "== model $shape $t"; make_model "$hetero" "$shape" "$t" "$m" || continue; }
    engines=(hetero llama.cpp)
    for ((round = 1; round <= ${ROUNDS:-2}; round++)); do
      for ((i = 0; i < 2; i++)); do
        e=${engines[$(((i + round - 1) % 2))]}
        echo "== $shape $t $e (round $round)"
        if [[ $e == hetero ]]; then
          "$hetero" bench --config "$config" -m "$m" --providers cpu -p "$pp" -n "$tg" -d "$depth" -r "${REPS:-3}" \
            --cache-type "${CACHE_TYPE:-auto}" >"$run_out" 2>/dev/null
        else
          "$peer/llama-bench" -m "$m" -t "$threads" -p "$pp" -n "$tg" -d "$depth" -r "${REPS:-3}" >"$run_out" 2>/dev/null
        fi
        cat "$run_out"
        record "$shape" "$t" "$e"
      done
    done
  done
done

echo "== summary (best of ${ROUNDS:-2} rounds, $threads threads; decode GB/s = file bytes x tok/s; probe ${probe:-?} GB/s)"
((depth > 0)) && echo "(tests after $depth cached tokens; hetero's cache: ${CACHE_TYPE:-auto}, llama.cpp's: f16)"
echo "| shape | type | pp$pp$at hetero | pp$pp$at llama.cpp | ratio | tg$tg$at hetero | tg$tg$at llama.cpp | ratio | hetero GB/s (% of probe) |"
echo "|---|---|---|---|---|---|---|---|---|"
for shape in ${SHAPES:-tinyllama-1.1b}; do
  for t in ${TYPES:-q4_0 q8_0 q4_k}; do
    bytes=$(stat -L -c %s "$models/$shape-$t.gguf")
    awk -v s="$shape" -v t="$t" -v b="$bytes" -v p="${probe:-0}" -v pp="pp$pp$at" -v tg="tg$tg$at" '
      $1 == s && $2 == t { k = $3 " " $4; if ($5 > best[k]) best[k] = $5 }
      END {
        ph = best["hetero " pp]; pl = best["llama.cpp " pp]; th = best["hetero " tg]; tl = best["llama.cpp " tg]
        gbs = th * b / 1e9
        share = p > 0 ? sprintf("%.0f%%", 100 * gbs / p) : "-"
        printf "| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f (%s) |\n", s, t, ph, pl, pl ? ph / pl : 0, th, tl, tl ? th / tl : 0,
               gbs, share }' "$results"
  done
done
rm -f "$config" "$results" "$run_out"
