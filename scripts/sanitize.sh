#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer
# included), halting on the first error. Builds ./build-asan once: debug with -Og (xsimd's
# AVX-512 intrinsics do not compile at -O0) and without -march=native, so it works on any
# x86. Extra arguments go to meson test (e.g. --suite core). Leaks inside Graphviz's own
# plugin loading and font stack are suppressed (tests/sanitizers/lsan.supp); nothing of ours is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh > /dev/null  # the packages (and the release build the examples' data needs)
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debug -Doptimization=g -Db_sanitize=address,undefined -Db_lundef=false \
    -Dnative=false -Dtests=enabled -Dexamples=enabled -Dbench=disabled -Dtool=enabled -Dgraphviz=enabled -Dz3=enabled
fi
ninja -C build-asan
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 4 "$@"
