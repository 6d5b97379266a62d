#!/usr/bin/env bash
# The test job: set up and build, then run every Google Test suite with `meson test`.
# Extra arguments go to meson test (e.g. --suite ops).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== meson test"
meson test -C build --print-errorlogs --num-processes 2 "$@"
