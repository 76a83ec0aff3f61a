#!/usr/bin/env bash
# An installed tree works from any directory: plugins are found next to the
# installed libhetero, and the default model under share/.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd /
json=$("$prefix/bin/hetero" providers --json)
echo "$json" | grep -q "\"path\": \"$prefix/lib/hetero/plugins/libhetero-ep-cpu.so\"" || { echo "cpu plugin not loaded from the install dir"; echo "$json"; exit 1; }
text=$("$prefix/bin/hetero" run --providers cpu -p "Once upon a time" -n 8 --temp 0 -q)
[[ "$text" == "Once upon a time, there was a little girl"* ]] || { echo "unexpected text: $text"; exit 1; }
[[ -f "$prefix/include/hetero/ep_api.h" && -f "$prefix/include/hetero/sdk/provider.hpp" ]] || { echo "headers not installed"; exit 1; }
echo "installed tree works from /"
