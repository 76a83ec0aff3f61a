#!/usr/bin/env bash
# Embeddings of hetero against llama.cpp's on the same files: models/
# stories260K.gguf and random-weight gen-model files of several
# architectures. hetero embed (mean pooling, unit length) and peer-embed
# (tests/arch/peer_embed.cpp: llama.cpp's library with embeddings on, mean
# pooling, then normalised) embed the same texts; every text's two vectors
# must have cosine similarity >= MIN_COSINE (0.999), and texts that differ
# must not give the same vector.
#
# Usage: peer_embeddings.sh HETERO_BINARY PEER_DIR MODELS_DIR
# PEER_DIR holds cpu/peer-embed (tests/arch/build_peer.sh makes it); without
# it the test is skipped (exit 77).
set -uo pipefail
hetero="$1"
peer="$2/cpu/peer-embed"
models="$3"
min_cosine=${MIN_COSINE:-0.999}
if [[ ! -x $peer ]]; then
  echo "SKIP: no llama.cpp peer at $peer (tests/arch/build_peer.sh builds one; it needs npm)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
texts=("Once upon a time" "The little dog ran to the park and played with a red ball." "Lily"
       "She said: \"I am happy!\" and smiled at her mom, who was baking a big cake in the kitchen.")
files=("$models/stories260K.gguf")
for spec in "llama tiny-k f32" "qwen3 tiny f32" "gemma2 tiny f32" "phi3 tiny q8_0"; do
  read -r arch shape type <<<"$spec"
  m="$tmp/$arch-$shape-$type.gguf"
  if ! "$hetero" gen-model "$m" --shape "$shape" --arch "$arch" --type "$type" --seed 7 >/dev/null 2>"$tmp/err"; then
    echo "FAIL gen-model $spec: $(cat "$tmp/err")"; exit 1
  fi
  files+=("$m")
done
fail=0
for m in "${files[@]}"; do
  name=$(basename "$m")
  if ! "$hetero" embed -m "$m" -q --providers cpu -c 512 "${texts[@]}" >"$tmp/ours.json" 2>"$tmp/ours.err"; then
    echo "FAIL $name: hetero embed: $(tail -3 "$tmp/ours.err")"; fail=1; continue
  fi
  if ! "$peer" "$m" "${texts[@]}" >"$tmp/peer.txt" 2>"$tmp/peer.err"; then
    echo "FAIL $name: peer-embed: $(tail -3 "$tmp/peer.err")"; fail=1; continue
  fi
  if ! python3 - "$tmp/ours.json" "$tmp/peer.txt" "$min_cosine" "$name" <<'PY'
import json, math, sys
ours = [d["embedding"] for d in json.load(open(sys.argv[1]))["data"]]
peer = [[float(x) for x in line.split()] for line in open(sys.argv[2]) if line.strip()]
least, name = float(sys.argv[3]), sys.argv[4]
def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
ok = len(ours) == len(peer)
if not ok:
    print(f"FAIL {name}: hetero gave {len(ours)} vectors, llama.cpp {len(peer)}")
for i, (a, b) in enumerate(zip(ours, peer)):
    if len(a) != len(b):
        print(f"FAIL {name} text {i}: widths {len(a)} and {len(b)}"); ok = False; continue
    c = cos(a, b)
    norm = math.sqrt(sum(x * x for x in a))
    print(f"{name:28s} text {i}: cosine {c:.7f} (1 - cosine {1 - c:.1e}), |v| {norm:.6f}")
    if not (c >= least and abs(norm - 1) < 1e-4):
        print(f"FAIL {name} text {i}: needs cosine >= {least} and unit length"); ok = False
# Different texts, different vectors: a constant output would agree with itself.
if ok and max(cos(ours[0], v) for v in ours[1:]) > 0.99999:
    print(f"FAIL {name}: different texts gave the same vector"); ok = False
sys.exit(0 if ok else 1)
PY
  then
    fail=1
  fi
done
exit $fail
