#!/usr/bin/env bash
# hetero used from an install, as a vendor and an application developer use it:
#
#  1. `cmake --install` into a temporary prefix; the installed tree runs from
#     any directory (plugins found beside libhetero, the default model under
#     share/); the installed headers need nothing that is not installed.
#  2. The C++ and C template providers (share/hetero/template/) built out of
#     tree twice each, with find_package(hetero) and with pkg-config; each
#     plugin exports hetero_ep_init alone (the installed plugins too), passes
#     hetero-conformance, is listed by `hetero providers` from
#     HETERO_PLUGIN_PATH, and is gone once its file is; a plugin built for
#     ABI 1.0 still loads.
#  3. A trivial application against hetero::hetero (find_package) and
#     hetero.pc (pkg-config); examples/*/ when that directory exists.
#  4. `cpack -G DEB`: each package holds the right files and Depends; the
#     development files alone build a provider; the runtime and CPU packages
#     unpacked into a scratch root generate text.
#  5. No libpython in the installed hetero and libhetero.so.
#
# Every check runs; the failures are listed at the end (exit status 1).
# Usage: install_test.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 700 "$work"
export XDG_CACHE_HOME=$work/cache  # plugin probe verdicts stay in the scratch dir
unset HETERO_PLUGIN_PATH HETERO_CONFIG
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt")
start=$SECONDS

failures=()
fail() { echo "FAIL: $*"; failures+=("$*"); }
ok() { echo "ok: $*"; }
section() { echo; echo "== $* ($((SECONDS - start)) s)"; }
# Runs a command quietly; on failure shows its output and records the failure.
run() {
  local what=$1; shift
  local log=$work/last.log
  if "$@" >"$log" 2>&1; then ok "$what"; return 0; fi
  echo "--- $what: $*"; tail -n 40 "$log"; fail "$what"; return 1
}
# The defined dynamic symbols of a plugin must be hetero_ep_init alone, plus
# the extern "C" symbols its hetero_add_provider(... EXPORTS) names, if any.
exports_only_entry() {
  local so=$1 syms want
  syms=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort -u | xargs)
  want=$(printf '%s\n' hetero_ep_init "${@:2}" | sort -u | xargs)
  if [[ "$syms" == "$want" ]]; then ok "$(basename "$so") exports $want"
  else fail "$(basename "$so") exports '$syms', not '$want'"; fi
}
# Diagnostics the in-tree plugins export on purpose (plugins/npu_emu/README.md).
declare -A intree_exports=([libhetero-ep-npu_emu.so]="hetero_npu_emu_stats hetero_npu_emu_outlier_stats")
# Provider names `hetero providers` loaded (status "loaded"), one a line.
loaded_providers() {
  "$1" providers --json 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["plugins"]:
    if p.get("status") == "loaded": print(p["provider"], p["path"])'
}

# ------------------------------------------------------------------ install
section "cmake --install into a temporary prefix"
prefix=$work/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
  cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1
fi
ok "installed into $prefix"
hetero=$prefix/bin/hetero

json=$(cd / && "$hetero" providers --json 2>&1)
grep -q "\"path\": \"$prefix/lib/hetero/plugins/libhetero-ep-cpu.so\"" <<<"$json" \
  && ok "the cpu plugin is found beside the installed libhetero" || fail "cpu plugin not loaded from the install dir: $json"
text=$(cd / && "$hetero" run --providers cpu -p "Once upon a time" -n 8 --temp 0 -q 2>"$work/run.err")
[[ "$text" == "Once upon a time, there was a little girl"* ]] && ok "installed hetero run from /" \
  || { cat "$work/run.err"; fail "installed hetero run: unexpected text '$text'"; }

for f in include/hetero/ep_api.h include/hetero/sdk/provider.hpp include/hetero/registry.hpp \
         lib/cmake/hetero/heteroConfig.cmake lib/cmake/hetero/heteroConfigVersion.cmake \
         lib/cmake/hetero/HeteroProvider.cmake lib/cmake/hetero/heteroProviderTargets.cmake \
         lib/cmake/hetero/heteroRuntimeTargets.cmake lib/pkgconfig/hetero-ep.pc lib/pkgconfig/hetero.pc \
         share/hetero/hetero-ep.map share/hetero/template/cpp/CMakeLists.txt share/hetero/template/c/CMakeLists.txt \
         share/doc/hetero/writing-a-provider.md share/doc/hetero/conformance.md bin/hetero-conformance \
         lib/hetero/hetero-plugin-probe; do
  [[ -e "$prefix/$f" ]] || fail "not installed: $f"
done
[[ -f "$src/core/include/hetero/hetero.h" && ! -f "$prefix/include/hetero/hetero.h" ]] && fail "not installed: include/hetero/hetero.h"
ok "installed layout checked"

# Installed headers include only standard headers and installed hetero headers,
# and compile with nothing but the installed include dir.
bad_includes=$(cd "$prefix/include" && grep -rHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]+[>"]' hetero | while IFS= read -r line; do
  file=${line%%:*}; inc=$(sed -E 's/.*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
  if [[ "$inc" == hetero/* ]]; then [[ -f "$inc" ]] || echo "$file includes <$inc>, which is not installed"
  elif [[ "$inc" == */* || "$inc" == *.hpp ]]; then echo "$file includes <$inc>, outside the standard library"
  fi
done)
[[ -z "$bad_includes" ]] && ok "installed headers include only the standard library and installed hetero headers" \
  || fail "installed headers: $bad_includes"
(cd "$prefix/include" && find hetero -name '*.hpp' -o -name '*.h' | sort | sed 's/.*/#include <&>/') >"$work/all_headers.cpp"
run "every installed header compiles (C++20, installed include dir only)" \
  c++ -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ "$work/all_headers.cpp"
for h in ep_api.h hetero.h; do
  [[ -f "$prefix/include/hetero/$h" ]] || continue
  echo "#include <hetero/$h>" >"$work/c_$h.c"
  run "hetero/$h compiles as C99" cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$work/c_$h.c"
done

# ----------------------------------------------------------- providers
section "template providers built out of tree (find_package and pkg-config)"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
plugindir=$(pkg-config --variable=plugindir hetero-ep)
[[ "$(realpath -m "$plugindir")" == "$prefix/lib/hetero/plugins" ]] && ok "hetero-ep.pc plugindir is the install's plugin dir" \
  || fail "hetero-ep.pc plugindir is $plugindir, not $prefix/lib/hetero/plugins"
declare -A provider_name=([cpp]=example [c]=example_c)
declare -A provider_source=([cpp]=example_provider.cpp [c]=example_c_provider.c)
built=()
for how in cmake pkgconfig; do
  plugins=$work/plugins-$how
  mkdir -p "$plugins"
  for t in cpp c; do
    name=${provider_name[$t]}
    srcdir=$work/template-$t-$how
    cp -r "$prefix/share/hetero/template/$t" "$srcdir"  # a vendor starts from a copy
    so=$srcdir/build/libhetero-ep-$name.so
    if [[ $how == cmake ]]; then
      run "$t template: cmake configure (find_package(hetero))" \
        cmake -S "$srcdir" -B "$srcdir/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" &&
      run "$t template: cmake build" cmake --build "$srcdir/build" || continue
    else
      mkdir -p "$srcdir/build"
      if [[ $t == cpp ]]; then
        run "$t template: g++ with pkg-config hetero-ep" \
          c++ -std=c++20 -O2 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags hetero-ep) \
              "$srcdir/${provider_source[$t]}" -o "$so" $(pkg-config --libs hetero-ep) || continue
      else
        run "$t template: cc with pkg-config hetero-ep (cflags_c)" \
          cc -std=c99 -pedantic -O2 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --variable=cflags_c hetero-ep) \
             "$srcdir/${provider_source[$t]}" -o "$so" $(pkg-config --libs hetero-ep) || continue
      fi
    fi
    [[ -f "$so" ]] || { fail "$t template ($how): $so was not built"; continue; }
    cp "$so" "$plugins/"
    built+=("$plugins/$(basename "$so")")
  done
done
# hetero_add_provider installs into <prefix>/lib/hetero/plugins.
vendor=$work/vendor-prefix
run "cpp template: cmake --install puts the plugin into lib/hetero/plugins" \
  cmake --install "$work/template-cpp-cmake/build" --prefix "$vendor" &&
  { [[ -f "$vendor/lib/hetero/plugins/libhetero-ep-example.so" ]] || fail "cmake --install of the template: no $vendor/lib/hetero/plugins/libhetero-ep-example.so"; }

section "exports, conformance, listing"
for so in "${built[@]}"; do exports_only_entry "$so"; done
for so in "$prefix"/lib/hetero/plugins/libhetero-ep-*.so; do
  # shellcheck disable=SC2086  # a list of names
  exports_only_entry "$so" ${intree_exports[$(basename "$so")]:-}
done
for so in "${built[@]}"; do
  run "hetero-conformance passes on $(basename "$(dirname "$so")")/$(basename "$so")" "$prefix/bin/hetero-conformance" "$so"
done
for how in cmake pkgconfig; do
  plugins=$work/plugins-$how
  listed=$(HETERO_PLUGIN_PATH=$plugins loaded_providers "$hetero")
  for name in example example_c; do
    grep -qx "$name $plugins/libhetero-ep-$name.so" <<<"$listed" && ok "hetero providers lists $name ($how build)" \
      || fail "hetero providers does not list $name from $plugins: $listed"
  done
  rm -f "$plugins/libhetero-ep-example.so"
  listed=$(HETERO_PLUGIN_PATH=$plugins loaded_providers "$hetero")
  if grep -q "^example " <<<"$listed"; then fail "example still listed after its file was removed ($how)"
  elif grep -q "^example_c " <<<"$listed"; then ok "removing libhetero-ep-example.so removes the provider ($how)"
  else fail "example_c vanished with example's file ($how): $listed"; fi
done
# A provider built for ABI 1.0 (its table says 1.0, its props struct ends at
# 1.0's fields) against the installed header loads into the installed core.
abi10=$work/plugins-abi10
mkdir -p "$abi10"
run "ABI 1.0 test plugin builds against the installed header" \
  cc -std=c99 -O2 -fPIC -shared $(pkg-config --variable=cflags_c hetero-ep) "$src/tests/plugins/abi10_plugin.c" \
     -o "$abi10/libhetero-ep-abi10test.so" $(pkg-config --libs hetero-ep) &&
  { listed=$(HETERO_PLUGIN_PATH=$abi10 loaded_providers "$hetero")
    grep -q "^abi10test " <<<"$listed" && ok "an ABI 1.0 plugin loads into the installed core" \
      || fail "the ABI 1.0 plugin is not loaded by the installed core: $listed"; }

# ---------------------------------------------------------- applications
section "applications against the install"
app=$work/app
cp -r "$src/tests/install/app" "$app"
run "app: cmake configure (find_package(hetero), hetero::hetero)" \
  cmake -S "$app" -B "$app/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" &&
run "app: cmake build" cmake --build "$app/build" &&
{ out=$(cd / && "$app/build/list_providers" 2>&1); grep -qx "cpu $prefix/lib/hetero/plugins/libhetero-ep-cpu.so" <<<"$out" \
    && ok "app (CMake) finds the installed cpu provider" || fail "app (CMake) output: $out"; }
run "app: c++ with pkg-config hetero" \
  c++ -std=c++20 -O2 "$app/list_providers.cpp" -o "$app/list_providers_pc" $(pkg-config --cflags --libs hetero) \
      -Wl,-rpath,"$(pkg-config --variable=libdir hetero)" &&
{ out=$(cd / && "$app/list_providers_pc" 2>&1); grep -qx "cpu $prefix/lib/hetero/plugins/libhetero-ep-cpu.so" <<<"$out" \
    && ok "app (pkg-config) finds the installed cpu provider" || fail "app (pkg-config) output: $out"; }

# >>> examples: every examples/<name>/ with a CMakeLists.txt builds out of tree
# against the install (find_package(hetero) + hetero::hetero). Running them is
# each example's own business; add its invocation here once it has one.
if [[ -d "$src/examples" ]]; then
  for ex in "$src"/examples/*/; do
    [[ -f "$ex/CMakeLists.txt" ]] || continue
    exname=$(basename "$ex")
    exbuild=$work/examples/$exname
    run "examples/$exname: configure against the install" \
      cmake -S "$ex" -B "$exbuild" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" &&
    run "examples/$exname: build" cmake --build "$exbuild"
  done
  # The embedding example generates what `hetero run` generates (greedy, the shipped model).
  gen=$work/examples/generate/hetero-generate
  if [[ -x "$gen" ]]; then
    want=$(cd / && "$hetero" run --providers cpu -p "Once upon a time" -n 24 --temp 0 -q 2>/dev/null)
    got=$(cd / && "$gen" --providers cpu -p "Once upon a time" -n 24 2>"$work/gen.err")
    if [[ -n "$got" && "$want" == "Once upon a time$got" ]]; then ok "examples/generate prints the tokens hetero run prints"
    else fail "examples/generate: '$got' against hetero run's '$want' ($(tail -2 "$work/gen.err"))"; fi
  else
    fail "examples/generate: no hetero-generate built"
  fi
else
  echo "(no examples/ directory: nothing to build)"
fi
# <<< examples

# ------------------------------------------------------------ no Python
section "no libpython in the runtime"
for f in "$prefix/bin/hetero" "$prefix"/lib/libhetero.so; do
  if ldd "$f" | grep -qi 'libpython'; then
    fail "$(basename "$f") links libpython (the runtime must not): $(ldd "$f" | grep -i libpython | xargs)"
  else ok "$(basename "$f") links no libpython"; fi
done

# ------------------------------------------------------------- packages
section "cpack -G DEB"
pkgs=$work/debs
if ! (cd "$build" && cpack -G DEB -B "$pkgs" >"$work/cpack.log" 2>&1); then
  tail -n 40 "$work/cpack.log"; fail "cpack -G DEB"
else
  ok "cpack -G DEB: $(cd "$pkgs" && ls *.deb | xargs)"
  arch=$(dpkg --print-architecture)
  deb() { echo "$pkgs/${1}_${version}_${arch}.deb"; }
  # Paths in a package (symbolic links by their own name), directories left out.
  files() { dpkg-deb --contents "$(deb "$1")" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$'; }
  depends() { dpkg-deb --field "$(deb "$1")" Depends; }
  expected=(hetero hetero-dev hetero-conformance)
  for p in cpu opencl vulkan npu_emu; do
    [[ -f "$build/lib/hetero/plugins/libhetero-ep-$p.so" ]] && expected+=("hetero-ep-${p//_/-}")
  done
  for p in "${expected[@]}"; do [[ -f "$(deb "$p")" ]] || fail "package $p was not built"; done
  for p in "$pkgs"/*.deb; do
    n=$(dpkg-deb --field "$p" Package)
    [[ " ${expected[*]} " == *" $n "* ]] || fail "unexpected package $n"
  done

  # hetero: the runtime, without development files or plugins.
  if [[ -f "$(deb hetero)" ]]; then
    f=$(files hetero)
    for want in /usr/bin/hetero "/usr/lib/libhetero.so.$version" /usr/lib/hetero/hetero-plugin-probe \
                /usr/share/hetero/config.example.json; do
      grep -qx "$want" <<<"$f" || fail "hetero lacks $want"
    done
    grep -q '^/usr/share/hetero/models/.*\.gguf$' <<<"$f" || fail "hetero lacks the default model"
    grep -q '^/usr/share/hetero/soc/.*\.json$' <<<"$f" || fail "hetero lacks the SoC profiles"
    stray=$(grep -E '^/usr/include/|/cmake/|/pkgconfig/|^/usr/lib/libhetero\.so$|/plugins/|/template/|hetero-conformance' <<<"$f")
    [[ -z "$stray" ]] || fail "hetero holds development files or plugins: $(xargs <<<"$stray")"
    d=$(depends hetero)
    grep -qi python <<<"$d" && fail "hetero depends on Python: $d"
    grep -qE '(^|, )hetero-' <<<"$d" && fail "hetero depends on another hetero package: $d"
    echo "hetero Depends: $d"
  fi

  # hetero-ep-<name>: the plugin alone, on the runtime of the same version.
  for p in "${expected[@]}"; do
    [[ $p == hetero-ep-* && -f "$(deb "$p")" ]] || continue
    so=libhetero-ep-${p#hetero-ep-}.so; so=${so//npu-emu/npu_emu}
    f=$(files "$p")
    [[ "$f" == "/usr/lib/hetero/plugins/$so" ]] || fail "$p holds other files than /usr/lib/hetero/plugins/$so: $(xargs <<<"$f")"
    d=$(depends "$p")
    grep -qE "(^|, )hetero \(= $version\)" <<<"$d" || fail "$p does not depend on hetero (= $version): $d"
    case $p in
      hetero-ep-opencl) grep -q 'libopencl1\|ocl-icd-libopencl1' <<<"$d" || fail "$p does not depend on the OpenCL ICD loader: $d" ;;
      hetero-ep-vulkan) grep -q 'libvulkan1' <<<"$d" || fail "$p does not depend on libvulkan1: $d" ;;
    esac
    echo "$p Depends: $d"
  done

  # hetero-dev: headers, CMake package, pkg-config, templates, conformance;
  # nothing of the runtime, and no dependency beyond the C/C++ runtime.
  if [[ -f "$(deb hetero-dev)" ]]; then
    f=$(files hetero-dev)
    for want in /usr/include/hetero/ep_api.h /usr/include/hetero/sdk/provider.hpp /usr/lib/cmake/hetero/heteroConfig.cmake \
                /usr/lib/pkgconfig/hetero-ep.pc /usr/lib/pkgconfig/hetero.pc /usr/lib/libhetero.so \
                /usr/share/hetero/template/cpp/example_provider.cpp /usr/share/hetero/template/c/example_c_provider.c \
                /usr/share/doc/hetero/writing-a-provider.md /usr/share/hetero/hetero-ep.map; do
      grep -qx "$want" <<<"$f" || fail "hetero-dev lacks $want"
    done
    stray=$(grep -E '^/usr/bin/|libhetero\.so\.|/plugins/|/models/|/soc/' <<<"$f")
    [[ -z "$stray" ]] || fail "hetero-dev holds runtime files: $(xargs <<<"$stray")"
    d=$(depends hetero-dev)
    extra=$(tr ',' '\n' <<<"$d" | sed 's/^ *//; s/ .*//' | grep -vxE 'libc6|libstdc\+\+6|libgcc-s1' | xargs)
    [[ -z "$extra" ]] || fail "hetero-dev depends on more than the C/C++ runtime: $d"
    echo "hetero-dev Depends: $d"
    # The development files alone build a provider (and say hetero::hetero is absent).
    devroot=$work/devroot
    dpkg -x "$(deb hetero-dev)" "$devroot"
    cp -r "$devroot/usr/share/hetero/template/c" "$work/template-c-dev"
    run "c template builds from the unpacked hetero-dev alone" \
      cmake -S "$work/template-c-dev" -B "$work/template-c-dev/build" -G "$generator" -DCMAKE_PREFIX_PATH="$devroot/usr" &&
    run "c template from hetero-dev: build" cmake --build "$work/template-c-dev/build" &&
    exports_only_entry "$work/template-c-dev/build/libhetero-ep-example_c.so"
  fi

  # hetero-conformance: the tool and its guide; on the runtime only where the
  # tool links libhetero (it reads models with it).
  if [[ -f "$(deb hetero-conformance)" ]]; then
    f=$(files hetero-conformance)
    [[ "$(sort <<<"$f" | xargs)" == "/usr/bin/hetero-conformance /usr/share/doc/hetero/conformance.md" ]] \
      || fail "hetero-conformance holds other files than the tool and conformance.md: $(xargs <<<"$f")"
    d=$(depends hetero-conformance)
    if readelf -d "$build/bin/hetero-conformance" | grep -q 'NEEDED.*libhetero\.so'; then
      grep -qE "(^|, )hetero \(= $version\)" <<<"$d" || fail "hetero-conformance links libhetero but does not depend on hetero (= $version): $d"
    else
      grep -qE '(^|, )hetero( |,|$)' <<<"$d" && fail "hetero-conformance depends on hetero without linking libhetero: $d"
    fi
    echo "hetero-conformance Depends: $d"
  fi

  # The runtime and the CPU provider unpacked into a scratch root run as installed.
  if [[ -f "$(deb hetero)" && -f "$(deb hetero-ep-cpu)" ]]; then
    root=$work/root
    dpkg -x "$(deb hetero)" "$root" && dpkg -x "$(deb hetero-ep-cpu)" "$root"
    listed=$(loaded_providers "$root/usr/bin/hetero")
    [[ "$listed" == "cpu $root/usr/lib/hetero/plugins/libhetero-ep-cpu.so" ]] && ok "unpacked packages: hetero providers finds cpu alone" \
      || fail "unpacked packages: hetero providers: $listed"
    text=$(cd / && "$root/usr/bin/hetero" run -n 8 -p "Once upon a time" --temp 0 -q 2>"$work/deb-run.err")
    [[ "$text" == "Once upon a time, there was a little girl"* ]] && ok "unpacked packages: hetero run -n 8" \
      || { cat "$work/deb-run.err"; fail "unpacked packages: hetero run: unexpected text '$text'"; }
  fi
fi

echo
echo "install test: $((SECONDS - start)) s"
if (( ${#failures[@]} )); then
  echo "${#failures[@]} check(s) failed:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "every check passed"
