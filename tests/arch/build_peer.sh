#!/usr/bin/env bash
# Builds the llama.cpp peer that tests/arch/peer_tokens.sh compares against,
# into OUT_DIR (skipped when OUT_DIR already has it), and peer-greedy
# (tests/arch/peer_greedy.cpp) against that peer's libllama. Needs npm: where
# npm or its registry is unreachable it says so and exits 0, and the test skips.
# Usage: build_peer.sh OUT_DIR
set -uo pipefail
out="$1"
here="$(cd "$(dirname "$0")" && pwd)"
setup="$here/../../../shared/tools/peer/setup.sh"
if [[ ! -x "$out/cpu/llama-completion" ]]; then
  if ! command -v npm >/dev/null || ! timeout 20 npm ping >/dev/null 2>&1; then
    echo "npm or its registry is unreachable: no llama.cpp peer, the architecture token test will skip"
    exit 0
  fi
  if [[ ! -x "$setup" ]]; then
    echo "no peer setup script at $setup: the architecture token test will skip"
    exit 0
  fi
  "$setup" "$out" || { echo "building the llama.cpp peer failed: the architecture token test will skip"; exit 0; }
fi
# The peer's headers are in the source tree setup.sh unpacked; its libraries
# keep the names setup.sh links its tools against.
src="$out/.work/src"
if [[ ! -x "$out/cpu/peer-greedy" || "$here/peer_greedy.cpp" -nt "$out/cpu/peer-greedy" ]]; then
  if ! g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" "$here/peer_greedy.cpp" -o "$out/cpu/peer-greedy" \
      -L"$out/cpu" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,'$ORIGIN'; then
    echo "building peer-greedy against the llama.cpp peer failed: the architecture token test will fail"
  fi
fi
