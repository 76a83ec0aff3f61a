#!/usr/bin/env bash
# Builds the llama.cpp peer that the side-by-side tests and benchmarks compare
# hetero against, from npm packages only:
#   - node-llama-cpp carries llama.cpp's source tree as a git bundle
#     (llama/gitRelease.bundle) and the vocabulary test files inside it;
#   - @node-llama-cpp/linux-x64 and @node-llama-cpp/linux-x64-vulkan carry
#     that llama.cpp's shared libraries, prebuilt (CPU with its x86 variants
#     picked at run time, and Vulkan).
# llama.cpp's own command-line tools are compiled from the bundled source
# against those libraries. Pinned: node-llama-cpp 3.22.1, whose bundle is
# llama.cpp of 2026-09-28; the tests' expectations were measured with it.
#
# usage: tests/peer/setup_peer.sh [--vocab-only] OUT_DIR
# Result:
#   OUT_DIR/cpu/     llama-bench llama-completion llama-perplexity llama-quantize
#                    llama-tokenize llama-convert-llama2c-to-ggml, and the libraries
#   OUT_DIR/vulkan/  llama-bench llama-completion (need libvulkan.so.1 and a GPU driver)
#   OUT_DIR/vocab/   llama.cpp's ggml-vocab-*.gguf tokenizer test files (.inp/.out beside)
#   OUT_DIR/src/     the llama.cpp source (headers for programs built against the peer)
#   OUT_DIR/PEER_VERSION  written last: the peer is complete when it exists
# --vocab-only fetches only node-llama-cpp and fills OUT_DIR/vocab and OUT_DIR/src.
# A complete OUT_DIR is left as it is (delete it to rebuild). Downloads stay
# in OUT_DIR/.download; keep OUT_DIR out of git (build*/ and .peer/ are ignored).
#
# Exit status: 0 ready; 77 cannot be built on this machine (not Linux x86-64, npm, git or a C++
# compiler missing, or the npm registry unreachable: callers skip); 1 failed.
# Needs npm, git, tar, a C++17 compiler (CXX, default g++). PEER_JOBS (default:
# the number of cores) tools compile at once.
set -euo pipefail

NODE_LLAMA_CPP=3.22.1
LLAMA_CPP_DATE=2026-09-28
LLAMA_CPP_COMMIT=de3ff815ea7d559ee917f063901b8986f038abc6
# The libraries' sonames in these packages; the tools link them by file name.
LIB_VERSION=v0.5.0

vocab_only=0
if [[ ${1:-} == --vocab-only ]]; then vocab_only=1; shift; fi
if [[ $# -ne 1 ]]; then
  echo "usage: $0 [--vocab-only] OUT_DIR" >&2
  exit 2
fi

cannot() { echo "setup_peer: cannot build the llama.cpp peer here: $*" >&2; exit 77; }
die() { echo "setup_peer: $*" >&2; exit 1; }

mkdir -p "$1"
out=$(cd "$1" && pwd)
stamp="$out/PEER_VERSION"
want="node-llama-cpp $NODE_LLAMA_CPP, llama.cpp $LLAMA_CPP_DATE"

if [[ -f $stamp ]]; then
  have=$(head -n 1 "$stamp")
  [[ $have == "$want" ]] || die "$out holds another peer ($have, wanted $want): delete it or pick another folder"
  echo "llama.cpp peer already in $out ($have)"
  exit 0
fi
if [[ $vocab_only == 1 && -f $out/vocab/ggml-vocab-llama-spm.gguf && -f $out/vocab/ggml-vocab-llama-bpe.gguf &&
      -f $out/vocab/ggml-vocab-qwen2.gguf && -f $out/vocab/ggml-vocab-gpt-2.gguf ]]; then
  echo "llama.cpp vocabulary files already in $out/vocab"
  exit 0
fi

cxx=${CXX:-g++}
command -v npm >/dev/null || cannot "npm is not installed"
command -v git >/dev/null || cannot "git is not installed"
command -v tar >/dev/null || cannot "tar is not installed"
if [[ $vocab_only == 0 ]]; then
  command -v "$cxx" >/dev/null || cannot "no C++ compiler ($cxx)"
  [[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] ||
    cannot "the prebuilt llama.cpp libraries are for Linux on x86-64, this is $(uname -s) on $(uname -m)"
fi

dl="$out/.download"
mkdir -p "$dl"
packages=(node-llama-cpp)
[[ $vocab_only == 1 ]] || packages+=(@node-llama-cpp/linux-x64 @node-llama-cpp/linux-x64-vulkan)
for pkg in "${packages[@]}"; do
  # npm pack names scoped packages as scope-name-version.tgz.
  name=${pkg#@}; name=${name//\//-}
  dir="$dl/$name"
  [[ -d $dir ]] && continue
  tgz="$dl/$name-$NODE_LLAMA_CPP.tgz"
  if [[ ! -f $tgz ]]; then
    echo "fetching $pkg@$NODE_LLAMA_CPP from npm"
    # npm checks each tarball against the registry's integrity hash.
    if ! (cd "$dl" && timeout 600 npm pack --silent "$pkg@$NODE_LLAMA_CPP" >/dev/null); then
      timeout 30 npm ping >/dev/null 2>&1 || cannot "the npm registry is unreachable"
      die "npm pack $pkg@$NODE_LLAMA_CPP failed"
    fi
    [[ -f $tgz ]] || die "npm pack did not write $tgz"
  fi
  mkdir -p "$dir.tmp"
  tar xzf "$tgz" -C "$dir.tmp" --strip-components=1
  mv "$dir.tmp" "$dir"
done

src="$out/src"
if [[ ! -f $src/include/llama.h ]]; then
  bundle="$dl/node-llama-cpp/llama/gitRelease.bundle"
  [[ -f $bundle ]] || die "node-llama-cpp $NODE_LLAMA_CPP has no llama/gitRelease.bundle"
  rm -rf "$src"
  git -c advice.detachedHead=false clone -q "$bundle" "$src"
fi
commit=$(git -C "$src" rev-parse HEAD)
date=$(git -C "$src" log -1 --format=%cs)
[[ $commit == "$LLAMA_CPP_COMMIT" ]] || die "the bundled llama.cpp is $commit ($date), expected $LLAMA_CPP_COMMIT ($LLAMA_CPP_DATE)"

mkdir -p "$out/vocab"
cp "$src"/models/ggml-vocab-*.gguf* "$out/vocab/"
# What the packages held is copied out by now; the .tgz files stay.
tidy() { rm -rf "$dl"/node-llama-cpp "$dl"/node-llama-cpp-linux-x64 "$dl"/node-llama-cpp-linux-x64-vulkan; }
if [[ $vocab_only == 1 ]]; then
  tidy
  echo "llama.cpp vocabulary files in $out/vocab (llama.cpp $date)"
  exit 0
fi

for variant in cpu vulkan; do
  platform=linux-x64
  [[ $variant == vulkan ]] && platform=linux-x64-vulkan
  libs="$dl/node-llama-cpp-$platform/bins/$platform"
  compgen -G "$libs/*.so" >/dev/null || die "no libraries in $libs"
  mkdir -p "$out/$variant"
  cp "$libs"/*.so "$out/$variant/"
done

# llama2.c's converter keeps the whole model in one ggml context sized by
# mem_model_gb; 2 GB is too small for the 1B-and-up shapes the benchmarks use.
sed 's/params.mem_model_gb    = 2;/params.mem_model_gb    = 10;/' \
  "$src/examples/convert-llama2c-to-ggml/convert-llama2c-to-ggml.cpp" >"$dl/convert-llama2c-to-ggml.cpp"
grep -q 'mem_model_gb    = 10;' "$dl/convert-llama2c-to-ggml.cpp" || die "could not raise the converter's mem_model_gb"

# One line per tool: variant, name, sources (relative to src/ unless absolute), extra libraries.
tools=(
  "cpu llama-bench tools/llama-bench/llama-bench.cpp tools/llama-bench/main.cpp"
  "cpu llama-completion tools/completion/completion.cpp tools/completion/main.cpp"
  "cpu llama-tokenize tools/tokenize/tokenize.cpp"
  "cpu llama-quantize tools/quantize/quantize.cpp tools/quantize/main.cpp"
  "cpu llama-perplexity tools/perplexity/perplexity.cpp tools/perplexity/main.cpp"
  "cpu llama-convert-llama2c-to-ggml $dl/convert-llama2c-to-ggml.cpp -l:libggml-cpu-x64.so"
  "vulkan llama-bench tools/llama-bench/llama-bench.cpp tools/llama-bench/main.cpp"
  "vulkan llama-completion tools/completion/completion.cpp tools/completion/main.cpp"
)
compile() {  # variant name args...
  local variant=$1 name=$2 suffix=""
  shift 2
  [[ $variant == vulkan ]] && suffix=.vulkan
  local args=()
  for a in "$@"; do
    if [[ $a == -* || $a == /* ]]; then args+=("$a"); else args+=("$src/$a"); fi
  done
  "$cxx" -O2 -DNDEBUG -std=c++17 -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" \
    "${args[@]}" -o "$out/$variant/$name.tmp" -L"$out/$variant" \
    -l:libllama$suffix.$LIB_VERSION.so -l:libllama-common.so -l:libggml$suffix.$LIB_VERSION.so -l:libggml-base.so \
    -Wl,-rpath,'$ORIGIN' -lpthread >"$dl/$variant-$name.log" 2>&1 &&
    mv "$out/$variant/$name.tmp" "$out/$variant/$name"
}
jobs_max=${PEER_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=0
running=0
for t in "${tools[@]}"; do
  read -r -a words <<<"$t"
  if [[ -x $out/${words[0]}/${words[1]} ]]; then continue; fi
  echo "compiling ${words[0]}/${words[1]}"
  compile "${words[@]}" &
  running=$((running + 1))
  if [[ $running -ge $jobs_max ]]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [[ $running -gt 0 ]]; do
  wait -n || failed=1
  running=$((running - 1))
done
if [[ $failed != 0 ]]; then
  for t in "${tools[@]}"; do
    read -r -a words <<<"$t"
    [[ -x $out/${words[0]}/${words[1]} ]] || { echo "== ${words[0]}/${words[1]} failed:"; tail -n 20 "$dl/${words[0]}-${words[1]}.log"; }
  done >&2
  die "compiling llama.cpp's tools failed (logs in $dl)"
fi

# The tools must start (their libraries found through the rpath).
usage=$("$out/cpu/llama-quantize" --help 2>&1) || true
[[ $usage == *usage:* ]] || die "the built llama-quantize does not start: ${usage:0:300}"
printf '%s\n%s\n' "$want" "llama.cpp commit $commit" >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
tidy
echo "llama.cpp peer ready in $out ($want)"
