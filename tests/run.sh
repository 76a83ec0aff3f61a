#!/usr/bin/env bash
# The test command: installs what it needs, builds, runs every suite.
#   1. Release build of everything; ctest (unit, conformance on every provider
#      found: CPU, OpenCL on PoCL, Vulkan on lavapipe; greedy reference tokens;
#      every architecture token for token against llama.cpp, built into build/peer).
#      block types against ggml through a llama.cpp peer built from npm, label
#      peer, skipped where npm is unreachable).
#   2. ASan + UBSan build of core, CPU provider and unit tests; ctest -L unit.
#   3. ThreadSanitizer build of core, CPU provider and the multi-threaded tests; ctest -L tsan.
#   4. CPU ISA matrix: AVX2-only and no-AVX x86 under qemu, aarch64 NEON under qemu.
#   5. libFuzzer harnesses (clang, ASan + UBSan), FUZZ_SECONDS (30) each.
# Each stage prints its start and the time spent so far, so a slow run shows
# where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() { echo "=== tests/run.sh: $* (at ${SECONDS}s)"; }
stage "dependencies"
packaging/install-deps.sh --test
tests/fetch_vocab.sh || echo "could not fetch vocab files: tokenizer vocab tests will skip"

jobs=$(nproc)
stage "release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETERO_BUILD_TESTS=ON -DHETERO_BUILD_BENCH=ON \
  -DHETERO_WITH_CPU=ON -DHETERO_WITH_OPENCL=ON -DHETERO_WITH_VULKAN=ON -DHETERO_SANITIZE=OFF
cmake --build build -j"$jobs"
tests/arch/build_peer.sh build/peer || [[ $? == 77 ]]  # llama.cpp (tests/peer/setup_peer.sh), for the comparisons (77: no npm, they skip)
stage "release ctest"
ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs" --timeout 600

stage "ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHETERO_SANITIZE=ON -DHETERO_BUILD_TESTS=ON \
  -DHETERO_WITH_OPENCL=OFF -DHETERO_WITH_VULKAN=OFF -DHETERO_BUILD_BENCH=OFF
cmake --build build-asan -j"$jobs" --target hetero_unit_tests hetero_cpu_kernels_test hetero-ep-cpu
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan -L unit --output-on-failure --no-tests=error -j"$jobs" --timeout 600

stage "ThreadSanitizer"
# ThreadSanitizer on the multi-threaded parts: the session's per-device
# workers (plans over two or three cpu device entries, both sync modes,
# sessions on several threads, re-planning after a fault) and the CPU
# provider's thread pool (every op with 4 threads). Only the cpu provider is
# built: PoCL's and lavapipe's driver threads are not instrumented.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHETERO_SANITIZE_THREAD=ON -DHETERO_BUILD_TESTS=ON \
  -DHETERO_WITH_OPENCL=OFF -DHETERO_WITH_VULKAN=OFF -DHETERO_WITH_NPU_EMU=OFF -DHETERO_BUILD_BENCH=OFF
cmake --build build-tsan -j"$jobs" --target hetero_thread_tests hetero-ep-cpu hetero-conformance
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan -L tsan --output-on-failure --no-tests=error -j"$jobs" --timeout 600

stage "aarch64 build and the ISA matrix"
# The runtime for aarch64: core, CLI, cpu (NEON) and npu_emu, on Debian's
# arm64 libraries (multiarch); the providers alone where those are missing.
aarch64_core=ON
dpkg-query -W -f='${Status}' libfmt-dev:arm64 2>/dev/null | grep -q "install ok installed" || {
  aarch64_core=OFF; echo "no arm64 libraries (multiarch): the aarch64 build has the providers only"; }
cmake -S . -B build-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake -DHETERO_BUILD_CORE=$aarch64_core \
  -DHETERO_WITH_OPENCL=OFF -DHETERO_WITH_VULKAN=OFF -DHETERO_BUILD_TESTS=OFF -DHETERO_BUILD_BENCH=OFF
cmake --build build-aarch64 -j"$jobs"
tests/cpu/run_isa_matrix.sh build build-aarch64

stage "fuzzers"
FUZZ_SECONDS=${FUZZ_SECONDS:-30} tests/fuzz/run.sh
stage "all tests passed"
