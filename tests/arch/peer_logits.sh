#!/usr/bin/env bash
# Teacher-forced logits and perplexity of hetero against llama.cpp's
# llama-perplexity on the files people download: a random-weight llama file
# (tiny-k shape, widths that fit K-quant super-blocks) in F32, requantized by
# llama-quantize to Q8_0, Q4_0 and the K-quant mixes. For each file
# llama-perplexity -c CHUNK --kl-divergence-base writes its log-probabilities
# for the text; hetero perplexity --llama-logits reads them, checks that both
# tokenized the text to the same ids, scores the same chunks the same way
# (--chunk: BOS first, second half of each chunk scored) and reports top-1
# agreement, the largest log-probability difference, the mean KL and the
# perplexity llama.cpp's log-probabilities give. Checks per file: top-1
# agreement >= MIN_TOP1 (0.99), max |d log-prob| <= MAX_DLOGPROB (0.1), and
# hetero's perplexity within 1 % of llama.cpp's.
#
# llama-perplexity runs with an f32 KV cache and no flash attention (hetero's
# CPU path keeps the cache in f32) and without weight repacking (on CPUs with
# AMX, llama.cpp's repacked K-quant path rounds its Q8_K activation scales to
# f16, unlike its plain path); PEER_FLAGS replaces these flags.
#
# Usage: peer_logits.sh HETERO_BINARY PEER_DIR TEXT [TYPE...]
# PEER_DIR holds cpu/llama-perplexity and cpu/llama-quantize (tests/arch/
# build_peer.sh makes them); without them the test is skipped (exit 77).
set -uo pipefail
hetero="$1"
peer="$2/cpu"
text="$3"
shift 3
types=("$@")
[[ ${#types[@]} == 0 ]] && types=(F32 Q8_0 Q4_0 Q6_K Q5_K_M Q4_K_M Q3_K_M Q2_K)
for tool in llama-perplexity llama-quantize; do
  if [[ ! -x "$peer/$tool" ]]; then
    echo "SKIP: no llama.cpp peer at $peer/$tool (tests/arch/build_peer.sh builds one; it needs npm)"
    exit 77
  fi
done
chunk=${CHUNK:-128}
min_top1=${MIN_TOP1:-0.99}
max_dlogprob=${MAX_DLOGPROB:-0.1}
peer_flags=${PEER_FLAGS:--nr -ctk f32 -ctv f32 -fa off}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

base="$tmp/f32.gguf"
if ! "$hetero" gen-model "$base" --shape tiny-k --arch llama --type f32 --seed ${SEED:-15} >/dev/null 2>"$tmp/err"; then
  echo "FAIL gen-model: $(cat "$tmp/err")"; exit 1
fi
field() { grep -o "\"$1\": [-0-9.e]*" <<<"$2" | head -1 | awk '{print $2}'; }
printf '%-8s %8s %12s %12s %12s %12s\n' type top1 max_dlogp mean_kl ppl_hetero ppl_llama
for type in "${types[@]}"; do
  m="$tmp/$type.gguf"
  if [[ $type == F32 ]]; then
    m="$base"
  elif ! "$peer/llama-quantize" "$base" "$m" "$type" >"$tmp/q.log" 2>&1; then
    echo "FAIL $type: llama-quantize: $(tail -3 "$tmp/q.log")"; fail=1; continue
  fi
  # shellcheck disable=SC2086  # peer_flags is a list of flags
  if ! "$peer/llama-perplexity" -m "$m" -f "$text" -c "$chunk" -t 2 $peer_flags --kl-divergence-base "$tmp/$type.kld" >"$tmp/p.log" 2>&1; then
    echo "FAIL $type: llama-perplexity: $(tail -3 "$tmp/p.log")"; fail=1; continue
  fi
  if ! out=$("$hetero" perplexity -m "$m" -f "$text" --llama-logits "$tmp/$type.kld" --providers cpu --threads 2 --json 2>"$tmp/h.err"); then
    echo "FAIL $type: hetero perplexity: $(tail -3 "$tmp/h.err")"; fail=1; continue
  fi
  top1=$(field llama_top1_agreement "$out")
  dmax=$(field llama_max_abs_dlogprob "$out")
  kl=$(field llama_mean_kl "$out")
  ours=$(field perplexity "$out")
  theirs=$(field llama_perplexity "$out")
  # The estimate llama-perplexity prints should be the one its logits give.
  # It is read when present: its log goes out through a logging thread, and
  # on a loaded machine a run has exited 0 with its last lines missing.
  printed=$(grep -o 'Final estimate: PPL = [0-9.]*' "$tmp/p.log" | awk '{print $5}')
  if [[ -n $printed ]] && ! awk -v a="$theirs" -v b="$printed" 'BEGIN { r = a / b - 1; if (r < 0) r = -r; exit !(r <= 0.001) }'; then
    echo "FAIL $type: llama.cpp's logits read by hetero give perplexity $theirs, llama-perplexity printed $printed"
    fail=1
  fi
  printf '%-8s %8s %12s %12s %12s %12s\n' "$type" "$top1" "$dmax" "$kl" "$ours" "$theirs"
  if ! awk -v t="$top1" -v d="$dmax" -v a="$ours" -v b="$theirs" -v mt="$min_top1" -v md="$max_dlogprob" \
      'BEGIN { r = a / b - 1; if (r < 0) r = -r; exit !(t != "" && d != "" && t + 0 >= mt && d + 0 <= md && r <= 0.01) }'; then
    echo "FAIL $type: needs top-1 >= $min_top1, max |d log-prob| <= $max_dlogprob, perplexity within 1 % ($ours vs $theirs)"
    fail=1
  fi
done
exit $fail
