#!/usr/bin/env bash
# Side-by-side GPU measurement: conformance of the OpenCL and Vulkan providers
# on the machine's GPU, greedy-token agreement with the CPU provider, and
# `hetero bench` against llama.cpp's llama-bench on the same random-weight
# TinyLlama-1.1B-shaped GGUFs.
# usage: bench/gpu_side_by_side.sh HETERO_BUILD_DIR LLAMA_CPP_VULKAN_DIR [MODEL_DIR]
# OPENCL_DEVICE (default NVIDIA) keeps the OpenCL provider on the devices whose
# name contains it (machines with PoCL also expose a CPU device). Each engine
# runs twice, alternating: llama.cpp's first prefill runs are often far slower.
set -uo pipefail
build=$1
peer=$2
models=${3:-/tmp/hetero-models}
mkdir -p "$models"
hetero=$build/bin/hetero
default_model=$(dirname "$0")/../models/stories260K.gguf
plugins=$build/lib/hetero/plugins
ocl_config=$(mktemp)
echo "{\"providers\":[{\"name\":\"opencl\",\"devices\":[\"${OPENCL_DEVICE:-NVIDIA}\"]}]}" > "$ocl_config"

echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null; nproc
echo "== providers"; "$hetero" providers
for p in opencl vulkan; do
  echo "== conformance $p"; "$build/bin/hetero-conformance" "$plugins/libhetero-ep-$p.so" | tail -4
done
echo "== greedy tokens vs cpu"
ref=$("$hetero" run -m "$default_model" --providers cpu --temp 0 -n 200 -q -p "Once upon a time")
for p in opencl vulkan; do
  got=$("$hetero" run --config "$ocl_config" -m "$default_model" --providers "$p" --temp 0 -n 200 -q -p "Once upon a time")
  [[ "$got" == "$ref" ]] && echo "$p: identical to cpu" || { echo "$p: DIFFERS from cpu"; echo "$got" | head -3; }
done
for t in q4_0 q8_0; do
  [[ -f "$models/tl-$t.gguf" ]] || "$hetero" gen-model "$models/tl-$t.gguf" --shape tinyllama-1.1b --type "$t"
done
for t in q4_0 q8_0; do
  for round in 1 2; do
    for p in vulkan opencl; do
      echo "== hetero bench $t $p (round $round)"
      "$hetero" bench --config "$ocl_config" -m "$models/tl-$t.gguf" --providers "$p" -p 512 -n 128 -r 5
    done
    echo "== llama.cpp vulkan $t (round $round)"; "$peer/llama-bench" -m "$models/tl-$t.gguf" -ngl 99 -p 512 -n 128 -r 5
  done
done
rm -f "$ocl_config"
