#!/usr/bin/env bash
# Greedy generations of hetero against llama.cpp's llama-completion, token for
# token, on random-weight files of every architecture hetero loads (F32 and
# Q8_0 matrices, 32 tokens). The generated text is compared: the synthetic
# vocabulary spells every token differently, so equal text is equal tokens.
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in "${archs[@]}"; do
  layers=2
  [[ $arch == gemma3 ]] && layers=6  # five local layers, then a global one
  for type in f32 q8_0; do
    m="$tmp/$arch-$type.gguf"
    if ! "$hetero" gen-model "$m" --shape tiny --layers $layers --arch "$arch" --type $type --seed ${SEED:-15} >/dev/null 2>"$tmp/err"; then
      echo "FAIL $arch $type: gen-model: $(cat "$tmp/err")"; fail=1; continue
    fi
    # PEER_FLAGS: extra llama-completion flags, e.g. "-ctk f32 -ctv f32 -fa off" for its f32 path.
    theirs=$("$peer" -m "$m" -p "$prompt" -n 32 --temp 0 -no-cnv --no-display-prompt -t 2 -c 256 ${PEER_FLAGS:-} 2>"$tmp/peer.err")
    rc=$?
    if [[ $rc != 0 ]]; then
      echo "FAIL $arch $type: llama-completion exited $rc: $(tail -3 "$tmp/peer.err")"; fail=1; continue
    fi
    ours=$("$hetero" run -m "$m" -p "$prompt" -n 32 --temp 0 -c 256 -q --providers cpu 2>"$tmp/ours.err")
    rc=$?
    if [[ $rc != 0 ]]; then
      echo "FAIL $arch $type: hetero exited $rc: $(tail -3 "$tmp/ours.err")"; fail=1; continue
    fi
    # hetero echoes the prompt's pieces first; llama-completion does not (--no-display-prompt).
    echoed=$("$hetero" run -m "$m" -p "$prompt" -n 0 -q --providers cpu 2>/dev/null)
    ours="${ours#"$echoed"}"
    theirs="${theirs% \[end of text\]}"  # llama-completion marks an end-of-generation token
    if [[ "$ours" == "$theirs" ]]; then
      echo "ok   $arch $type: $(wc -w <<<"$ours") words equal"
    else
      echo "FAIL $arch $type"
      echo "  hetero:    $ours"
      echo "  llama.cpp: $theirs"
      fail=1
    fi
  done
done
exit $fail
