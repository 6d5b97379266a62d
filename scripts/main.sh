#!/usr/bin/env bash
# The main job: set up and build, then run example 01 (symbolic scalar autograd with
# grad of grad), which prints its IR and checks its derivatives against hand-derived ones.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== running examples/01_scalar_autograd"
./build/examples/01_scalar_autograd
