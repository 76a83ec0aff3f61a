#!/usr/bin/env bash
# Makes OUT_DIR a llama.cpp peer for the comparisons against llama.cpp
# (tests/arch/peer_tokens.sh, tests/arch/peer_logits.sh, tests/peer/peer_test.sh):
# builds it with tests/peer/setup_peer.sh unless OUT_DIR already holds one, then
# builds peer-greedy (tests/arch/peer_greedy.cpp) and peer-embed
# (tests/arch/peer_embed.cpp) against that peer's libllama.
# Where the peer cannot be built here (no npm, git or compiler, or the npm
# registry unreachable) it says so and exits 77; the comparisons then skip.
# A failed build exits 1.
# Usage: build_peer.sh OUT_DIR
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out="$1"
here="$(cd "$(dirname "$0")" && pwd)"
if [[ ! -x "$out/cpu/llama-completion" || ! -x "$out/cpu/llama-perplexity" || ! -x "$out/cpu/llama-quantize" ]]; then
  "$here/../peer/setup_peer.sh" "$out"
  rc=$?
  if [[ $rc == 77 ]]; then
    echo "no llama.cpp peer: the comparisons against llama.cpp will skip"
    exit 77
  elif [[ $rc != 0 ]]; then
    echo "building the llama.cpp peer in $out failed"
    exit 1
  fi
fi
# The peer's headers: the llama.cpp source tree setup_peer.sh unpacked (src/;
# .work/src in peers built by earlier versions of the script).
src="$out/src"
[[ -f $src/include/llama.h ]] || src="$out/.work/src"
if [[ ! -f $src/include/llama.h ]]; then
  echo "the llama.cpp peer in $out has no source tree (src/include/llama.h): delete $out and build it again"
  exit 1
fi
for program in greedy embed; do
  exe="$out/cpu/peer-$program"
  if [[ ! -x "$exe" || "$here/peer_$program.cpp" -nt "$exe" || "$here/peer_common.hpp" -nt "$exe" ]]; then
    if ! g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" "$here/peer_$program.cpp" -o "$exe" \
        -L"$out/cpu" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,'$ORIGIN'; then
      echo "building peer-$program against the llama.cpp peer in $out failed"
      exit 1
    fi
  fi
done
echo "llama.cpp peer ready in $out"
