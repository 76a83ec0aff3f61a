#!/usr/bin/env bash
# Greedy generations of hetero against llama.cpp's llama-completion, token for
# token, on random-weight files of every architecture hetero loads (F32 and
# Q8_0 matrices, 32 tokens). The generated text is compared: the synthetic
# vocabulary spells every token differently, so equal text is equal tokens.
# Every file is made for each seed in SEEDS (default "1 2 5").
#
# llama-completion runs with an f32 KV cache and no flash attention, as
# hetero's CPU path computes attention (PEER_FLAGS replaces these flags):
# with llama.cpp's default f16 cache and flash attention the mean KL between
# the two on Q8_0 files is 40 to 60 times larger (hetero perplexity
# --llama-logits, tests/arch/peer_logits.sh) and greedy Q8_0 generations
# part on some seeds. Random weights give nearly flat distributions, so a
# greedy run follows near-ties; seeds 3 and 15 still part on gemma2/gemma3
# Q8_0 files, whose GELU llama.cpp's CPU backend evaluates through an f16
# table (input and output rounded to f16) where hetero computes it in f32.
#
# A parting that repeats fails unless it is a near-tie: tests/arch/near_tie.py
# reads hetero's log-probabilities at the step where the texts part (hetero
# run --logprobs) and passes it when llama.cpp's token there is at most TIE
# (default 0.01) below hetero's pick. Only the text before it is compared.
# Under CI on another CPU (llama.cpp picks its CPU backend by the CPU it
# runs on) phi3 F32 seed 5 parted where llama.cpp ended its generation on a
# repeated token and hetero went on repeating it.
# HETERO_FLAGS: extra flags for hetero run.
# Usage: peer_tokens.sh HETERO_BINARY PEER_DIR [ARCH...]
# PEER_DIR holds cpu/llama-completion (tests/arch/build_peer.sh makes it);
# without it the test is skipped (exit 77).
set -uo pipefail
hetero="$1"
peer="$2/cpu/llama-completion"
shift 2
archs=("$@")
[[ ${#archs[@]} == 0 ]] && archs=(llama llama3 llama-linear qwen2 qwen3 phi3 gemma2 gemma3)
if [[ ! -x "$peer" ]]; then
  echo "SKIP: no llama.cpp peer at $peer (tests/arch/build_peer.sh builds one; it needs npm)"
  exit 77
fi
prompt="Once upon a time"
fail=0
# Sets theirs and ours for model $m; false (and reported) when an engine fails.
# Under loaded CI runs llama-completion has exited 0 having printed nothing
# (twice in a row, its log ending at thread-pool start) or having printed
# only the start of its text (seen twice: phi3 F32 seed 5 and llama-linear
# F32 seed 2, each time a prefix of hetero's text, and a full text when run
# again), where every run outside CI printed all of it. An output that stops
# short of hetero's without llama-completion's end-of-generation marker is
# asked for again, up to three times, before it counts as the peer's answer.
generate_both() {
  local rc attempt raw
  # shellcheck disable=SC2086  # HETERO_FLAGS is a list of flags
  ours=$("$hetero" run -m "$m" -p "$prompt" -n 32 --temp 0 -c 256 -q --providers cpu ${HETERO_FLAGS:-} 2>"$tmp/ours.err")
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "FAIL seed $seed $arch $type: hetero exited $rc: $(tail -3 "$tmp/ours.err")"; fail=1; return 1
  fi
  ours="${ours#"$echoed"}"
  for attempt in 1 2 3; do
    # shellcheck disable=SC2086  # PEER_FLAGS is a list of flags
    raw=$("$peer" -m "$m" -p "$prompt" -n 32 --temp 0 -no-cnv --no-display-prompt -t 2 -c 256 ${PEER_FLAGS:--ctk f32 -ctv f32 -fa off} 2>"$tmp/peer.err")
    rc=$?
    if [[ $rc != 0 ]]; then
      echo "FAIL seed $seed $arch $type: llama-completion exited $rc: $(tail -3 "$tmp/peer.err")"; fail=1; return 1
    fi
    theirs="${raw% \[end of text\]}"  # llama-completion marks an end-of-generation token
    [[ $theirs != "$raw" || $theirs == "$ours" || $ours != "$theirs"* ]] && break
    echo "note seed $seed $arch $type: llama-completion stopped short of hetero's text without its end marker (attempt $attempt, ${#theirs} of ${#ours} characters); its log ends: $(tail -1 "$tmp/peer.err")"
  done
}
# True when the texts part at a near-tie of hetero's log-probabilities; sets
# tie_report to what near_tie.py found.
near_tie() {
  tie_report=""
  # shellcheck disable=SC2086  # HETERO_FLAGS is a list of flags
  if ! "$hetero" run -m "$m" -p "$prompt" -n 32 --temp 0 -c 256 -q --providers cpu ${HETERO_FLAGS:-} \
      --logprobs "$tmp/logprobs.jsonl" --top-logprobs 8 >/dev/null 2>"$tmp/ours.err"; then
    tie_report="hetero run --logprobs failed: $(tail -3 "$tmp/ours.err")"
    return 1
  fi
  printf '%s' "$theirs" >"$tmp/theirs.txt"
  tie_report=$(python3 "$(dirname "$0")/near_tie.py" "$tmp/logprobs.jsonl" "$tmp/theirs.txt" "${TIE:-0.01}")
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
    # hetero echoes the prompt's pieces first; llama-completion does not (--no-display-prompt).
    echoed=$("$hetero" run -m "$m" -p "$prompt" -n 0 -q --providers cpu 2>/dev/null)
    tie_report=""
    generate_both || continue
    if [[ "$ours" != "$theirs" ]]; then
      # Once, under a loaded CI run (ctest -j2), seed 1 qwen2 q8_0 parted at
      # an end-of-text near-tie and agreed on every rerun. A parting is run
      # again: it fails only when it repeats, and a transient one is reported
      # with the engine whose output changed.
      first_ours=$ours first_theirs=$theirs
      generate_both || continue
      if [[ "$ours" == "$theirs" ]]; then
        changed=$([[ "$first_ours" != "$ours" ]] && echo -n "hetero ")$([[ "$first_theirs" != "$theirs" ]] && echo -n "llama.cpp")
        echo "note seed $seed $arch $type: parted once, equal when run again (output changed: ${changed:-neither})"
        echo "  first hetero:    $first_ours"
        echo "  first llama.cpp: $first_theirs"
      fi
    fi
    if [[ "$ours" == "$theirs" ]]; then
      echo "ok   seed $seed $arch $type: $(wc -w <<<"$ours") words equal"
    elif [[ -n $theirs ]] && near_tie; then
      echo "ok   seed $seed $arch $type: parted at a near-tie, $tie_report"
      echo "  hetero:    $ours"
      echo "  llama.cpp: $theirs"
    else
      echo "FAIL seed $seed $arch $type"
      echo "  hetero:    $ours"
      echo "  llama.cpp: $theirs"
      [[ -z $theirs ]] && echo "  llama-completion printed nothing; its log ends: $(tail -5 "$tmp/peer.err")"
      [[ -n ${tie_report:-} ]] && echo "  where they part: $tie_report"
      fail=1
    fi
  done
done
done
exit $fail
