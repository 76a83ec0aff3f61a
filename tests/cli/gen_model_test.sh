#!/usr/bin/env bash
# gen-model at shapes no preset has: widths that are not powers of two,
# grouped-query heads, a head size apart from dim / heads. Each file runs on
# the cpu provider and `hetero plan` shows its shape; K-quant rows of other
# widths fall back with a note; bad shapes are refused with the problem named.
# Usage: gen_model_test.sh HETERO_BINARY
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 HETERO_BINARY" >&2
  exit 2
fi
hetero="$1"
source "$(dirname "$0")/check_lib.sh"

gen() {  # gen FILE ARGS...: a small model on the tiny preset; stderr in $tmp/err
  local f="$1"
  shift
  "$hetero" gen-model "$tmp/$f" --shape tiny --layers 2 --vocab 300 "$@" >/dev/null 2>"$tmp/err"
}
runs() {  # runs FILE: a few greedy tokens on cpu
  "$hetero" run -m "$tmp/$1" --providers cpu -p "Once upon" -n 4 --temp 0 -q >"$tmp/out" 2>"$tmp/run_err" && [[ -s "$tmp/out" ]]
}
shape_is() {  # shape_is FILE TEXT: the model line of `hetero plan` holds TEXT
  "$hetero" plan -m "$tmp/$1" --providers cpu 2>/dev/null | head -1 | grep -qF -- "$2"
}

gen odd.gguf --dim 96 --ffn 200 --heads 6 --kv-heads 2 --type f16 && runs odd.gguf &&
  shape_is odd.gguf "2 layers, embedding 96, feed-forward 200, 6 heads / 2 kv heads of 16, vocab 300)"
check "gen-model --dim 96 --ffn 200 --heads 6 --kv-heads 2 --type f16 runs on cpu, plan shows the shape" $?
for t in q4_0 q8_0; do
  gen odd_$t.gguf --dim 160 --ffn 416 --heads 5 --kv-heads 1 --type $t && runs odd_$t.gguf &&
    shape_is odd_$t.gguf "embedding 160, feed-forward 416, 5 heads / 1 kv heads of 32"
  check "gen-model --dim 160 --ffn 416 --heads 5 --kv-heads 1 --type $t runs on cpu" $?
done
for t in f32 q8_0; do
  gen hs_$t.gguf --dim 96 --ffn 224 --heads 6 --kv-heads 2 --head-size 32 --type $t && runs hs_$t.gguf &&
    shape_is hs_$t.gguf "embedding 96, feed-forward 224, 6 heads / 2 kv heads of 32"
  check "gen-model --head-size 32 apart from dim / heads (16), --type $t, runs on cpu" $?
done
gen hs_qwen3.gguf --dim 96 --ffn 224 --heads 6 --kv-heads 2 --head-size 32 --type q8_0 --arch qwen3 && runs hs_qwen3.gguf
check "gen-model --head-size 32 --arch qwen3 runs on cpu" $?
# Other fields stay the preset's.
"$hetero" gen-model "$tmp/ffn.gguf" --shape tiny --ffn 256 --type q8_0 >/dev/null 2>&1 &&
  shape_is ffn.gguf "2 layers, embedding 64, feed-forward 256, 4 heads / 2 kv heads of 16, vocab 512)"
check "gen-model --ffn alone keeps the preset's other fields" $?

# K-quants: rows that are not a multiple of 256 fall back per matrix as
# llama-quantize's do (q4_k: q5_0, or f16 where not a multiple of 32 either).
gen kq.gguf --dim 96 --ffn 200 --heads 6 --kv-heads 2 --type q4_k &&
  grep -q "rows of 96 values (the embedding width.*written as q5_0 instead of q4_K" "$tmp/err" &&
  grep -q "rows of 200 values (the feed-forward width.*written as f16 instead of q4_K" "$tmp/err" && runs kq.gguf
check "gen-model --type q4_k on 96 / 200-wide rows notes its q5_0 / f16 fallbacks and runs on cpu" $?
"$hetero" gen-model "$tmp/kk.gguf" --shape tiny-k --type q4_k >/dev/null 2>"$tmp/err" && ! grep -q "note:" "$tmp/err"
check "gen-model --type q4_k on 256-wide rows writes no fallback note" $?
"$hetero" gen-model --help | tr -s ' \n' ' ' | grep -q "fall back per matrix, as llama-quantize does"
check "gen-model --help documents the K-quant fallback" $?

# refused SHOULD-MATCH ARGS...: non-zero exit below 128, no file, the message.
refused() {
  local want="$1"
  shift
  rm -f "$tmp/bad.gguf"
  "$hetero" gen-model "$tmp/bad.gguf" --shape tiny "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  [[ $rc != 0 && $rc -lt 128 && ! -e "$tmp/bad.gguf" ]] && grep -q -- "$want" "$tmp/err"
}
refused "4 kv heads do not divide the 6 heads" --dim 96 --heads 6 --kv-heads 4
check "gen-model refuses kv heads that do not divide the heads" $?
refused "--layers: Value 0 not in range 1 to 1024" --layers 0
check "gen-model refuses zero layers" $?
refused "5 heads do not divide the embedding width 96" --dim 96 --heads 5
check "gen-model refuses heads that do not divide --dim without --head-size" $?
refused "head size 15 is odd; RoPE rotates pairs" --dim 90 --heads 6
check "gen-model refuses an odd head size" $?
refused "vocabulary 100 is smaller than the synthetic tokenizer's 259 tokens" --vocab 100
check "gen-model refuses a vocabulary below the synthetic tokenizer's" $?
refused "q4_0 stores rows in blocks of 32 values, but rows of 200 values" --ffn 200 --type q4_0
check "gen-model --type q4_0 refuses rows that are not a multiple of 32, naming the width" $?
refused "--dim: Value 100000 not in range" --dim 100000
check "gen-model refuses a width past its upper bound" $?

exit $fail
