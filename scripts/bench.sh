#!/usr/bin/env bash
# Benchmarks side by side with libtorch (Debian's libtorch-dev, installed here when
# missing; the library never links it). Builds ./build like scripts/setup.sh, then runs
# every benchmark under bench/.   scripts/bench.sh [--iters N]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "== installing libtorch-dev (benchmark peer only)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libtorch-dev
fi
bash scripts/setup.sh
meson configure build -Dlibtorch=enabled >/dev/null
ninja -C build bench/train_step_bench bench/c99_bench bench/pass_pipeline bench/per_sample_bench bench/load_bench bench/gemm_split_bench
echo "== training step: ours vs libtorch"
./build/bench/train_step_bench "$@"
echo "== C99 backend: JIT vs interpreter vs libtorch, standalone GEMM vs OpenBLAS"
./build/bench/c99_bench "$@"
echo "== our GEMM's thread split: column chunks (one B slice) vs row blocks (a slice per thread)"
./build/bench/gemm_split_bench
echo "== the optimizer: training steps without/with the pass pipeline, pipeline time on 10k-1M nodes"
./build/bench/pass_pipeline "$@"
echo "== per-sample gradients (vmap of grad), batch 64: ours vs functorch vmap(grad) vs a libtorch loop"
./build/bench/per_sample_bench
echo "== under load (one busy process on the same 2 CPUs) and the batch-1 forward vs its bandwidth bound"
./build/bench/load_bench "$@"
