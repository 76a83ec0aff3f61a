# Sourced by the bench scripts: shape_args NAME prints the `hetero gen-model`
# options of a shape, from bench/shapes.txt where NAME is listed there (a
# published model's shape), else `--shape NAME` (a gen-model preset).
# LAYERS=N replaces the shape's layer count (a sweep that must fit a time
# budget keeps every width and the vocabulary, and fewer layers).
shape_args() {
  local line args
  line=$(awk -v n="$1" '$1 == n { print; exit }' "$(dirname "${BASH_SOURCE[0]}")/shapes.txt")
  if [[ -n $line ]]; then
    # Drop the name and the source column (which may hold spaces up to the first option).
    args="--${line#*--}"
  else
    args="--shape $1"
  fi
  if [[ -n ${LAYERS:-} ]]; then
    args=$(sed -E 's/ ?--layers [0-9]+//' <<<"$args")" --layers $LAYERS"
  fi
  echo "$args"
}

# make_model HETERO SHAPE TYPE OUT writes a random-weight GGUF of a shape.
# TYPE in lower case is a `hetero gen-model --type`; in llama-quantize's
# spelling (Q4_K_M, Q5_K_S, IQ4_NL, ...) the file is written as f16 and
# quantized by $LLAMA_QUANTIZE (llama.cpp's llama-quantize), so its mix of
# block types, fallbacks for odd widths included, is the one users download.
make_model() {
  local hetero=$1 shape=$2 type=$3 out=$4
  if [[ $type =~ [A-Z] ]]; then
    [[ -n ${LLAMA_QUANTIZE:-} && -x $LLAMA_QUANTIZE ]] || { echo "type $type needs LLAMA_QUANTIZE (llama.cpp's llama-quantize)" >&2; return 1; }
    "$hetero" gen-model "$out.f16" $(shape_args "$shape") --type f16 >/dev/null &&
      "$LLAMA_QUANTIZE" "$out.f16" "$out" "$type" "$(nproc)" >/dev/null 2>&1
    local rc=$?
    rm -f "$out.f16"
    return $rc
  fi
  "$hetero" gen-model "$out" $(shape_args "$shape") --type "$type" >/dev/null
}
