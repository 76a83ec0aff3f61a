# Sourced by the bench scripts: shape_args NAME prints the `hetero gen-model`
# options of a shape, from bench/shapes.txt where NAME is listed there (a
# published model's shape), else `--shape NAME` (a gen-model preset).
shape_args() {
  local line
  line=$(awk -v n="$1" '$1 == n { print; exit }' "$(dirname "${BASH_SOURCE[0]}")/shapes.txt")
  if [[ -n $line ]]; then
    # Drop the name and the source column (which may hold spaces up to the first option).
    echo "--${line#*--}"
  else
    echo "--shape $1"
  fi
}
