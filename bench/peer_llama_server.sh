#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the peer's llama.cpp source (the git
# bundle inside node-llama-cpp, cloned by tests/peer/setup_peer.sh into
# PEER/src) against the peer's prebuilt CPU libraries (PEER/cpu), for
# bench/serve_parallel.py's side-by-side. The server's web UI is left out
# (no assets: --no-webui). About 15 minutes on 2 cores.
#
# usage: bench/peer_llama_server.sh PEER_DIR OUT_DIR
#   PEER_DIR: what tests/peer/setup_peer.sh made (its src/ and cpu/);
#   OUT_DIR gets llama-server beside links to the CPU backends it loads.
set -euo pipefail
peer=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
S=$peer/src L=$peer/cpu O=$out/obj
[[ -d $S/tools/server && -f $L/libllama.v0.5.0.so ]] || { echo "no llama.cpp source in $S or libraries in $L (run tests/peer/setup_peer.sh $peer)" >&2; exit 1; }
mkdir -p "$O" "$out/ui"
# The UI's generated sources, with no assets.
cmake -DUI_SOURCE_DIR="$S/tools/ui" -DUI_BINARY_DIR="$out/ui" -DLLAMA_SOURCE_DIR="$S" -DLLAMA_BUILD_NUMBER=0 -DHF_BUCKET=none \
  -DHF_VERSION= -DHF_ENABLED=OFF -DBUILD_UI=OFF -DLLAMA_UI_GZIP=ON -P "$S/scripts/ui-assets.cmake" >/dev/null
inc="-I$S/include -I$S/ggml/include -I$S/common -I$S/vendor -I$S/vendor/hash -I$S/vendor/cpp-httplib -I$S/tools/mtmd -I$S/tools/server -I$out/ui -I$S"
objs=()
cxx() { # source, optimisation: one object, kept between runs
  local o=$O/$(echo "$1" | tr '/' '_').o
  [[ -f $o ]] || g++ -std=c++17 "$2" -DNDEBUG -DLLAMA_SHARED -fPIC -w $inc -c "$S/$1" -o "$o"
  objs+=("$o")
}
cc() {
  local o=$O/$(echo "$1" | tr '/' '_').o
  [[ -f $o ]] || gcc -O2 -fPIC -w -I"$S/vendor/hash" -c "$S/$1" -o "$o"
  objs+=("$o")
}
# mtmd (multimodal: linked by the server, unused here) and the vendored hashes; sha1.c is C++.
for f in mtmd.cpp mtmd-audio.cpp mtmd-image.cpp mtmd-helper.cpp mtmd-helper-gen.cpp clip.cpp $(cd "$S/tools/mtmd" && ls models/*.cpp); do cxx "tools/mtmd/$f" -O1; done
cxx vendor/hash/hash.cpp -O2
cxx vendor/hash/sha1/sha1.c -O2
cc vendor/hash/sha256/sha256.c
cc vendor/hash/xxhash/xxhash.c
cxx vendor/cpp-httplib/httplib.cpp -O2
for f in server-chat server-task server-queue server-common server-context server-stream server-tools server-mcp server-schema server server-http server-models main; do
  cxx "tools/server/$f.cpp" -O2
done
g++ -std=c++17 -O1 -c "$out/ui/ui.cpp" -o "$O/ui.o"
objs+=("$O/ui.o")
g++ -o "$out/llama-server" "${objs[@]}" -L"$L" -l:libllama.v0.5.0.so -l:libllama-common.so -l:libggml.v0.5.0.so -l:libggml-base.so \
  -Wl,-rpath,"$L" -lpthread
# ggml loads its CPU backend from the executable's folder.
for f in "$L"/libggml-cpu-*.so; do ln -sf "$f" "$out/"; done
echo "llama-server ready in $out ($(git -C "$S" log -1 --format=%cs 2>/dev/null || echo '?'))"
