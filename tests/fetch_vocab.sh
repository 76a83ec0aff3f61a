#!/usr/bin/env bash
# Fetches llama.cpp's vocabulary-only GGUF test files (MIT) into .peer/vocab
# for the tokenizer tests (tests/unit/tokenizer_gguf_test.cpp, the tokenizer
# fuzzer): they ship in the llama.cpp source that the node-llama-cpp npm
# package bundles, which tests/peer/setup_peer.sh --vocab-only unpacks. The
# texts and expected ids they go with are in tests/data/models/vocab.
# Needs npm and git; without them it says so and the tests that need the
# files skip.
set -uo pipefail
cd "$(dirname "$0")/.."
tests/peer/setup_peer.sh --vocab-only .peer
rc=$?
if [[ $rc == 77 ]]; then
  echo "could not fetch llama.cpp's vocabulary files: the GGUF vocabulary tests will skip"
  exit 0
fi
exit $rc
