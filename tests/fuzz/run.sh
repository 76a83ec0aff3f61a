#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) into build-fuzz/ and
# runs each for FUZZ_SECONDS (default 20) from its seed corpus in
# tests/fuzz/corpus/NAME (new inputs go to build-fuzz/corpus/NAME). A crash
# stops the run with the input saved as build-fuzz/crash-NAME-*: fix it, then
# copy that file into tests/fuzz/corpus/NAME, where every later run replays it.
#   tests/fuzz/run.sh [NAME...]      (names: gguf llama2c tokenizer config graph)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${FUZZ_SECONDS:-20}
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(gguf llama2c tokenizer config graph)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETERO_BUILD_FUZZERS=ON \
  -DHETERO_BUILD_TESTS=OFF -DHETERO_BUILD_BENCH=OFF -DHETERO_WITH_CPU=OFF -DHETERO_WITH_OPENCL=OFF -DHETERO_WITH_VULKAN=OFF \
  -DHETERO_WITH_NPU_EMU=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${names[@]/#/fuzz_}"
for n in "${names[@]}"; do
  mkdir -p "build-fuzz/corpus/$n"
  echo "=== fuzz_$n: ${secs} s"
  # -rss_limit_mb: a reader that allocates by a hostile length fails the run.
  rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "build-fuzz/bin/fuzz_$n" -max_total_time="$secs" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$n-" "build-fuzz/corpus/$n" "tests/fuzz/corpus/$n" \
    >"build-fuzz/fuzz_$n.log" 2>&1 || rc=$?
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "build-fuzz/fuzz_$n.log" || true
  if [[ $rc != 0 ]]; then
    grep -E "ERROR|SUMMARY|what\(\)|Test unit written|round trip" "build-fuzz/fuzz_$n.log" | head -20
    echo "fuzz_$n failed (exit $rc): log build-fuzz/fuzz_$n.log, input build-fuzz/crash-$n-*"
    exit 1
  fi
done
echo "fuzzers passed"
