#!/usr/bin/env bash
# The install test: builds and runs the out-of-tree project in tests/consumer/ (a graph and
# its gradient, an nn::Linear trained with compile_train, SafeTensors, DOT) two ways:
#   (a) installed: `meson install --destdir` of BUILD_DIR (default ./build, built here if
#       needed) into a temp dir; the consumer compiled with `pkg-config --cflags --libs
#       minigrad` from the staged prefix; the installed `minigrad` tool and libminigrad.so
#       checked to load OpenMP OpenBLAS; every installed header compiled on its own
#       (-fsyntax-only) and every `#include "minigrad/..."` in them found in the install;
#   (b) subproject: the consumer's meson.build with dependency('minigrad') falling back to
#       subprojects/minigrad (a copy of this tree's files, no build dirs); no tests,
#       examples or benchmarks of minigrad may be configured. A full library build
#       (ccache helps on reruns: CCACHE_BASEDIR makes the temp paths relative).
# Prints PASS/FAIL lines and the time of each part; exits 1 if anything failed.
#   scripts/check_consumer.sh [BUILD_DIR]
# MG_CONSUMER_PARTS=a (or b) runs one part only; MG_CONSUMER_KEEP=1 keeps the temp dir.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
build=${1:-build}
parts=${MG_CONSUMER_PARTS:-ab}
CXX=${CXX:-c++}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/minigrad-consumer.XXXXXX")
if [ "${MG_CONSUMER_KEEP:-0}" = 1 ]; then echo "(keeping $tmp)"; else trap 'rm -rf "$tmp"' EXIT; fi

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
t_start=$SECONDS
elapsed() { echo "   ($(( SECONDS - $1 )) s)"; }

# OpenMP OpenBLAS's directory, when it is installed: binaries must load it from there.
multiarch=$($CXX -print-multiarch 2>/dev/null || true)
blas_omp_dir=/usr/lib/$multiarch/openblas-openmp
[ -n "$multiarch" ] && [ -e "$blas_omp_dir/libopenblas.so.0" ] || blas_omp_dir=""
check_blas() {  # FILE WHAT
  if [ -z "$blas_omp_dir" ]; then echo "SKIP: $2 loads OpenMP OpenBLAS (not installed)"; return; fi
  local line
  line=$(ldd "$1" 2>&1 | grep 'libopenblas\.so' | head -1)
  if [[ "$line" == *"=> $blas_omp_dir/libopenblas.so"* ]]; then
    pass "$2 loads libopenblas from $blas_omp_dir"
  else
    fail "$2 loads libopenblas from $blas_omp_dir (ldd: ${line:-no libopenblas})"
  fi
}

# ---------------------------------------------------------------- (a) installed prefix
if [[ "$parts" == *a* ]]; then
  t=$SECONDS
  echo "== (a) installed prefix (meson install --destdir) + pkg-config"
  if [ ! -f "$build/build.ninja" ]; then
    echo "FAIL: $build is not a configured build dir (run scripts/setup.sh)"; exit 1
  fi
  ninja -C "$build" >"$tmp/ninja.log" 2>&1 || { tail -30 "$tmp/ninja.log"; fail "ninja -C $build"; }
  if meson install -C "$build" --destdir "$tmp/stage" --quiet >"$tmp/install.log" 2>&1; then
    pass "meson install --destdir"
  else
    tail -30 "$tmp/install.log"; fail "meson install --destdir"
  fi
  read -r prefix libdir < <(meson introspect "$build" --buildoptions | /usr/bin/python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], o["libdir"])')
  root=$tmp/stage$prefix
  case "$libdir" in /*) libdir_abs=$tmp/stage$libdir ;; *) libdir_abs=$root/$libdir ;; esac
  export PKG_CONFIG_PATH=$libdir_abs/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  pc() { pkg-config --define-variable=prefix="$root" "$@" minigrad; }
  if cflags=$(pc --cflags) && libs=$(pc --libs); then
    pass "pkg-config --cflags --libs minigrad: $cflags $libs"
  else
    fail "pkg-config finds minigrad.pc under $libdir_abs/pkgconfig"; cflags=""; libs=""
  fi
  if [[ " $cflags " != *" -I$root/include "* ]]; then
    fail "pkg-config --cflags points into the staged prefix ($cflags)"
  fi

  # The consumer, compiled against the staged prefix only (rpath: it is not installed for real).
  mkdir -p "$tmp/a"
  # shellcheck disable=SC2086
  if $CXX -std=c++20 -Wall -Wextra tests/consumer/main.cpp -o "$tmp/a/consumer" $cflags $libs \
       -Wl,-rpath,"$libdir_abs" >"$tmp/a/compile.log" 2>&1; then
    pass "consumer compiles and links with pkg-config's flags"
    if (cd "$tmp/a" && ./consumer . >run.log 2>&1); then
      pass "consumer runs (installed): $(tail -1 "$tmp/a/run.log")"
    else
      cat "$tmp/a/run.log"; fail "consumer runs (installed)"
    fi
    ldd "$tmp/a/consumer" >"$tmp/a/ldd.txt" 2>&1
    if grep -q "libminigrad\.so.* => $libdir_abs/" "$tmp/a/ldd.txt"; then
      pass "consumer loads the staged libminigrad.so"
    else
      fail "consumer loads the staged libminigrad.so ($(grep libminigrad "$tmp/a/ldd.txt"))"
    fi
    check_blas "$tmp/a/consumer" "consumer"
  else
    cat "$tmp/a/compile.log"; fail "consumer compiles and links with pkg-config's flags"
  fi

  # The installed tool and shared library.
  tool=$root/bin/minigrad
  if [ -x "$tool" ] && "$tool" ops >"$tmp/ops.txt" 2>&1 && grep -q matmul "$tmp/ops.txt"; then
    pass "installed minigrad ops ($(wc -l <"$tmp/ops.txt") lines)"
  else
    fail "installed minigrad ops: $(head -5 "$tmp/ops.txt" 2>/dev/null)"
  fi
  [ -x "$tool" ] && check_blas "$tool" "installed minigrad tool"
  so=$(ls "$libdir_abs"/libminigrad.so.*.*.* 2>/dev/null | head -1)
  if [ -n "$so" ]; then check_blas "$so" "installed $(basename "$so")"; else fail "libminigrad.so installed"; fi
  [ -f "$libdir_abs/libminigrad.a" ] && pass "libminigrad.a installed" || fail "libminigrad.a installed"

  # Every header the tree ships is installed, and every include between them resolves there.
  inc=$root/include
  missing=0
  while read -r h; do
    [ -f "$inc/minigrad/$h" ] || { echo "   not installed: $h"; missing=1; }
  done < <( /usr/bin/python3 scripts/list_headers.py ir passes runtime dsl;
            cd include/minigrad && ls -- *.hpp )
  while IFS=: read -r file inc_name; do
    [ -f "$inc/$inc_name" ] || { echo "   ${file#"$inc"/} includes $inc_name, not installed"; missing=1; }
  done < <(grep -rHo '#include "minigrad/[^"]*"' "$inc/minigrad" | sed 's/#include "\(.*\)"/\1/')
  if [ $missing = 0 ]; then pass "every header and every header it includes is installed"; else fail "installed headers complete"; fi

  # Each installed header compiles on its own, seeing only the staged include tree.
  if [ -d "${prefix}/include/minigrad" ] && [ "$prefix" != "$root" ]; then
    echo "NOTE: $prefix/include/minigrad exists on this machine; a header missing from the stage could be found there"
  fi
  mkdir -p "$tmp/hdr"
  (cd "$inc" && find minigrad -type f \( -name '*.hpp' -o -name '*.h' \) | sort) >"$tmp/hdr/list"
  export CXX cflags tmp
  # shellcheck disable=SC2016
  xargs -P "$(nproc)" -I{} bash -c '
    h={}; tu=$tmp/hdr/$(echo "$h" | tr / _).cpp
    printf "#include <%s>\n" "$h" >"$tu"
    $CXX -std=c++20 -Wall -Wextra -fsyntax-only $cflags "$tu" >"$tu.log" 2>&1 || echo "$h" >>"$tmp/hdr/failed"
  ' <"$tmp/hdr/list"
  n=$(wc -l <"$tmp/hdr/list")
  if [ -s "$tmp/hdr/failed" ]; then
    while read -r h; do echo "--- $h"; head -20 "$tmp/hdr/$(echo "$h" | tr / _).cpp.log"; done <"$tmp/hdr/failed"
    fail "$(wc -l <"$tmp/hdr/failed") of $n installed headers do not compile on their own"
  elif [ "$n" -gt 0 ]; then
    pass "all $n installed headers compile on their own (g++ -std=c++20 -fsyntax-only)"
  else
    fail "no installed headers found under $inc/minigrad"
  fi
  elapsed "$t"
fi

# ---------------------------------------------------------------- (b) meson subproject
if [[ "$parts" == *b* ]]; then
  t=$SECONDS
  echo "== (b) meson subproject: dependency('minigrad') with subprojects/minigrad"
  sub=$tmp/sub
  mkdir -p "$sub/subprojects/minigrad"
  cp tests/consumer/meson.build tests/consumer/main.cpp "$sub/"
  # This tree's files (tracked and new, not ignored: no build dirs), symlinks kept.
  git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$sub/subprojects/minigrad"
  export CCACHE_BASEDIR=$sub
  # plain: no -O, no -g (fastest to compile; reruns hit ccache since paths are relative).
  if meson setup "$sub/build" "$sub" --buildtype=plain --force-fallback-for=minigrad \
       >"$sub/setup.log" 2>&1; then
    pass "meson setup (minigrad as a subproject)"
  else
    tail -30 "$sub/setup.log"; fail "meson setup (minigrad as a subproject)"
  fi
  if grep -q "Executing subproject minigrad" "$sub/setup.log"; then
    pass "dependency('minigrad') came from the subproject"
  else
    fail "dependency('minigrad') came from the subproject (see setup log)"
  fi
  if [ -f "$sub/build/build.ninja" ]; then
    extra=$(ninja -C "$sub/build" -t targets all | grep -oE '^subprojects/minigrad/(tests|examples|bench)/[^:]*' | head -5)
    if [ -z "$extra" ]; then
      pass "no tests/examples/bench targets of minigrad are configured"
    else
      fail "minigrad's tests/examples/bench targets are configured: $extra"
    fi
    echo "   building (the whole library: minutes on 2 cores)..."
    if ninja -C "$sub/build" >"$sub/build.log" 2>&1; then
      pass "ninja builds the consumer and libminigrad ($(grep -c '^\[' "$sub/build.log") steps)"
      if (cd "$sub/build" && ./consumer . >run.log 2>&1); then
        pass "consumer runs (subproject): $(tail -1 "$sub/build/run.log")"
      else
        cat "$sub/build/run.log"; fail "consumer runs (subproject)"
      fi
      check_blas "$sub/build/consumer" "consumer (subproject)"
    else
      grep -B2 -A20 -m3 'FAILED\|error' "$sub/build.log" | head -60; fail "ninja builds the consumer"
    fi
  fi
  elapsed "$t"
fi

echo "== check_consumer: $(( SECONDS - t_start )) s"
if [ $failures -gt 0 ]; then echo "FAIL: $failures check(s) failed"; exit 1; fi
echo "PASS: all consumer checks"
