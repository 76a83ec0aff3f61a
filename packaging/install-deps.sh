#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages hetero builds with. With --test, also
# what the test suite needs (cross compiler and qemu for the ISA matrix,
# Vulkan validation layers, node/npm and curl for the server tests). Uses
# sudo only when not root.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  libboost-dev libboost-filesystem-dev nlohmann-json3-dev libcli11-dev libfmt-dev libpcre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libvulkan-dev glslang-tools mesa-vulkan-drivers
  libcpp-httplib-dev
  libedit-dev
)
if [[ "${1:-}" == "--test" ]]; then
  # python3-jinja2: the oracle the chat template engine is compared with.
  packages+=(g++-aarch64-linux-gnu qemu-user vulkan-validationlayers vulkan-tools clang curl python3-jinja2)
  # npm for the server's openai-client test and the llama.cpp peer: Debian's
  # packages only where no node/npm is installed (a NodeSource nodejs bundles
  # npm and conflicts with Debian's npm package).
  command -v npm >/dev/null || packages+=(nodejs npm)
  # The runtime cross-built for aarch64 (core, CLI, cpu and npu_emu providers)
  # links Debian's arm64 libraries, installed beside the host's (multiarch).
  # Debian's mirrors carry arm64; Ubuntu's main archive does not (ports
  # does), so elsewhere the aarch64 stage builds the providers alone.
  if grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then
    packages+=(libboost-filesystem-dev:arm64 libfmt-dev:arm64 libpcre2-dev:arm64 libcpp-httplib-dev:arm64)
  fi
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "installing: ${missing[*]}"
  if [[ " ${missing[*]}" == *":arm64"* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# libFuzzer ships with clang's runtime libraries, packaged per clang version
# (Debian 12: libclang-rt-14-dev).
if [[ "${1:-}" == "--test" ]]; then
  v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  rt="libclang-rt-$v-dev"
  if ! dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q "install ok installed"; then
    echo "installing: $rt"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$rt"
  fi
fi
