#!/usr/bin/env bash
# Fuzzes every target of tests/fuzz/fuzz_targets.hpp with libFuzzer under AddressSanitizer
# and UndefinedBehaviorSanitizer. Installs Debian's clang-16, libclang-rt-16-dev and libomp-16-dev when
# missing, builds the library with them in ./build-fuzz, then runs each target for SECONDS
# (default 60) on a copy of its committed corpus. New crashes land in build-fuzz/findings/;
# add each (minimised) to tests/fuzz/corpus/<target>/ with the fix, so the ordinary test
# suite replays it forever. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# SECONDS=0 means no time limit; MG_FUZZ_RUNS=N stops each target after N executions
# (e.g. MG_FUZZ_RUNS=1000000 scripts/fuzz.sh 0 for a million per target).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
runs="${MG_FUZZ_RUNS:--1}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(text_ir npy safetensors idx pipeline rules tarka_formula)

missing=()
for p in clang-16 libclang-rt-16-dev libomp-16-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang-16 CXX=clang++-16 meson setup build-fuzz --buildtype=debugoptimized -Dnative=false -Db_lundef=false \
    -Dtests=disabled -Dexamples=disabled -Dbench=disabled -Dtool=disabled -Dgraphviz=disabled -Dz3=disabled \
    -Dcpp_args="$san -fsanitize=fuzzer-no-link" -Dc_args="$san" -Dcpp_link_args="$san"
fi
ninja -C build-fuzz libminigrad.a  # the static library is all a target links

mkdir -p build-fuzz/findings
summary=()
for t in "${targets[@]}"; do
  exe="build-fuzz/fuzz_$t"
  if [ ! -x "$exe" ] || [ tests/fuzz/fuzz_targets.cpp -nt "$exe" ] || [ build-fuzz/libminigrad.a -nt "$exe" ]; then
    clang++-16 -std=c++20 -O1 -g $san -fsanitize=fuzzer -DMG_FUZZ_TARGET="$t" -I. -Iinclude \
      tests/fuzz/libfuzzer_main.cpp tests/fuzz/fuzz_targets.cpp build-fuzz/libminigrad.a \
      -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -lz -fopenmp -ldl -o "$exe"
  fi
  work="build-fuzz/corpus/$t"
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  log="build-fuzz/fuzz_$t.log"
  echo "== fuzzing $t for ${seconds}s (0: no limit), runs cap $runs (-1: none)"
  set +e
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$exe" -max_total_time="$seconds" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="build-fuzz/findings/${t}-" "$work" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || true)
  if [ $rc -eq 0 ]; then
    summary+=("$t: ${execs:-?} executions, 0 findings")
  else
    summary+=("$t: FINDING (exit $rc) after ${execs:-?} executions: see $log and build-fuzz/findings/")
  fi
done
printf '%s\n' "${summary[@]}"
! printf '%s\n' "${summary[@]}" | grep -q FINDING
