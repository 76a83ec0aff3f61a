#!/usr/bin/env bash
# Fetches llama.cpp's vocabulary-only GGUF test files (MIT) into .peer/vocab
# for the tokenizer tests: they ship inside the node-llama-cpp npm package as
# a git bundle of llama.cpp. Needs npm and git; the tests skip without them.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f .peer/vocab/ggml-vocab-llama-bpe.gguf ]] && exit 0
command -v npm >/dev/null && command -v git >/dev/null || { echo "npm or git missing: tokenizer vocab tests will skip"; exit 0; }
work=.peer/.work
mkdir -p "$work" .peer/vocab
(
  cd "$work"
  npm pack --silent node-llama-cpp@3.22.1 >/dev/null
  mkdir -p node-llama-cpp && tar xzf node-llama-cpp-3.22.1.tgz -C node-llama-cpp --strip-components=1
  [[ -d src ]] || git clone -q node-llama-cpp/llama/gitRelease.bundle src
)
cp "$work"/src/models/ggml-vocab-*.gguf* .peer/vocab/
echo "vocab files in .peer/vocab"
