#!/usr/bin/env bash
# Builds the llama.cpp peer that tests/arch/peer_tokens.sh compares against,
# into OUT_DIR (skipped when OUT_DIR already has it). Needs npm: where npm or
# its registry is unreachable it says so and exits 0, and the test skips.
# Usage: build_peer.sh OUT_DIR
set -uo pipefail
out="$1"
setup="$(dirname "$0")/../../../shared/tools/peer/setup.sh"
[[ -x "$out/cpu/llama-completion" ]] && exit 0
if ! command -v npm >/dev/null || ! timeout 20 npm ping >/dev/null 2>&1; then
  echo "npm or its registry is unreachable: no llama.cpp peer, the architecture token test will skip"
  exit 0
fi
if [[ ! -x "$setup" ]]; then
  echo "no peer setup script at $setup: the architecture token test will skip"
  exit 0
fi
"$setup" "$out" || echo "building the llama.cpp peer failed: the architecture token test will skip"
