#!/usr/bin/env bash
# Greedy generations of hetero against llama.cpp, token id for token id, on
# random-weight files of every architecture hetero loads (F32 and Q8_0
# matrices, 32 tokens). Every file is made for each seed in SEEDS (default
# "1 2 5"). llama.cpp runs through peer-greedy (tests/arch/peer_greedy.cpp,
# built against the peer's libllama by tests/arch/build_peer.sh), which prints
# the ids it generates: llama-completion's text went through an asynchronous
# log queue and, on loaded CI machines, came out empty, cut short or with a
# piece printed twice.
#
# llama.cpp runs with an f32 KV cache and no flash attention, as hetero's CPU
# path computes attention (PEER_FLAGS replaces "--kv f32 --flash-attn off"):
# with llama.cpp's default f16 cache and flash attention the mean KL between
# the two on Q8_0 files is 40 to 60 times larger (hetero perplexity
# --llama-logits, tests/arch/peer_logits.sh) and greedy Q8_0 generations
# part on some seeds. Random weights give nearly flat distributions, so a
# greedy run follows near-ties; seeds 3 and 15 still part on gemma2/gemma3
# Q8_0 files, whose GELU llama.cpp's CPU backend evaluates through an f16
# table (input and output rounded to f16) where hetero computes it in f32.
#
# A parting that repeats fails unless it is a near-tie: tests/arch/near_tie.py
# reads hetero's log-probabilities at the step where the two part (hetero run
# --logprobs) and passes it when llama.cpp's token there is at most TIE
# (default 0.01) below hetero's pick. Only the tokens before it are compared.
# Under CI on another CPU (llama.cpp picks its CPU backend by the CPU it
# runs on) phi3 F32 seed 5 parted where llama.cpp ended its generation on a
# repeated token and hetero went on repeating it.
# HETERO_FLAGS: extra flags for hetero run.
# Usage: peer_tokens.sh HETERO_BINARY PEER_DIR [ARCH...]
# PEER_DIR holds cpu/peer-greedy (tests/arch/build_peer.sh makes it); without
# the llama.cpp peer the test is skipped (exit 77).
set -uo pipefail
hetero="$1"
peer_dir="$2"
peer="$peer_dir/cpu/peer-greedy"
shift 2
archs=("$@")
[[ ${#archs[@]} == 0 ]] && archs=(llama llama3 llama-linear qwen2 qwen3 phi3 gemma2 gemma3)
if [[ ! -x "$peer_dir/cpu/llama-completion" ]]; then
  echo "SKIP: no llama.cpp peer in $peer_dir (tests/arch/build_peer.sh builds one; it needs npm)"
  exit 77
fi
if [[ ! -x "$peer" ]]; then
  echo "FAIL: the llama.cpp peer in $peer_dir has no peer-greedy (tests/arch/build_peer.sh builds it)"
  exit 1
fi
prompt="Once upon a time"
fail=0
# Runs both engines on model $m and compares them: sets verdict (0 the same
# tokens, 3 parted at a near-tie, 1 parted; near_tie.py's codes) and report.
# False (and reported) when an engine fails.
generate_both() {
  local rc
  # shellcheck disable=SC2086  # HETERO_FLAGS is a list of flags
  "$hetero" run -m "$m" -p "$prompt" -n 32 --temp 0 -c 256 -q --providers cpu ${HETERO_FLAGS:-} \
      --logprobs "$tmp/ours.jsonl" --top-logprobs 8 >/dev/null 2>"$tmp/ours.err"
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "FAIL seed $seed $arch $type: hetero exited $rc: $(tail -3 "$tmp/ours.err")"; fail=1; return 1
  fi
  # shellcheck disable=SC2086  # PEER_FLAGS is a list of flags
  "$peer" "$m" "$prompt" 32 --threads 2 --ctx 256 ${PEER_FLAGS:---kv f32 --flash-attn off} >"$tmp/theirs.txt" 2>"$tmp/peer.err"
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "FAIL seed $seed $arch $type: peer-greedy exited $rc: $(tail -3 "$tmp/peer.err")"; fail=1; return 1
  fi
  report=$(python3 "$(dirname "$0")/near_tie.py" "$tmp/ours.jsonl" "$tmp/theirs.txt" "${TIE:-0.01}")
  verdict=$?
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for seed in ${SEEDS:-1 2 5}; do
for arch in "${archs[@]}"; do
  layers=2
  [[ $arch == gemma3 ]] && layers=6  # five local layers, then a global one
  for type in f32 q8_0; do
    m="$tmp/$arch-$type.gguf"
    if ! "$hetero" gen-model "$m" --shape tiny --layers $layers --arch "$arch" --type $type --seed "$seed" >/dev/null 2>"$tmp/err"; then
      echo "FAIL seed $seed $arch $type: gen-model: $(cat "$tmp/err")"; fail=1; continue
    fi
    generate_both || continue
    if [[ $verdict == 1 ]]; then
      # Once, under a loaded CI run (ctest -j2), seed 1 qwen2 q8_0 parted at
      # an end-of-text near-tie and agreed on every rerun. A parting is run
      # again and fails only when it repeats.
      first_report=$report
      generate_both || continue
      [[ $verdict != 1 ]] && echo "note seed $seed $arch $type: parted once, not when run again; first: $first_report"
    fi
    case $verdict in
      0) echo "ok   seed $seed $arch $type: $report" ;;
      3) echo "ok   seed $seed $arch $type: parted at a near-tie, $report" ;;
      *) echo "FAIL seed $seed $arch $type: $report"; fail=1 ;;
    esac
  done
done
done
exit $fail
