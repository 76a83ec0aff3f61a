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
# Under a loaded CI run llama-completion has twice in a row exited 0 having
# printed nothing, its log ending at thread-pool start, where every run
# outside CI printed the tokens: an empty output is asked for up to three
# times before it counts as the peer's answer.
generate_both() {
  local rc attempt
  for attempt in 1 2 3; do
    # shellcheck disable=SC2086  # PEER_FLAGS is a list of flags
    theirs=$("$peer" -m "$m" -p "$prompt" -n 32 --temp 0 -no-cnv --no-display-prompt -t 2 -c 256 ${PEER_FLAGS:--ctk f32 -ctv f32 -fa off} 2>"$tmp/peer.err")
    rc=$?
    if [[ $rc != 0 ]]; then
      echo "FAIL seed $seed $arch $type: llama-completion exited $rc: $(tail -3 "$tmp/peer.err")"; fail=1; return 1
    fi
    [[ -n $theirs ]] && break
    echo "note seed $seed $arch $type: llama-completion printed nothing (attempt $attempt); its log ends: $(tail -1 "$tmp/peer.err")"
  done
  ours=$("$hetero" run -m "$m" -p "$prompt" -n 32 --temp 0 -c 256 -q --providers cpu ${HETERO_FLAGS:-} 2>"$tmp/ours.err")
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "FAIL seed $seed $arch $type: hetero exited $rc: $(tail -3 "$tmp/ours.err")"; fail=1; return 1
  fi
  ours="${ours#"$echoed"}"
  theirs="${theirs% \[end of text\]}"  # llama-completion marks an end-of-generation token
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
    else
      echo "FAIL seed $seed $arch $type"
      echo "  hetero:    $ours"
      echo "  llama.cpp: $theirs"
      [[ -z $theirs ]] && echo "  llama-completion printed nothing; its log ends: $(tail -5 "$tmp/peer.err")"
      fail=1
    fi
  done
done
done
exit $fail
