#!/usr/bin/env bash
# The main job: set up and build; run example 01 (symbolic scalar autograd, grad of grad;
# prints its IR); then train the Fashion-MNIST MLP of example 04 (10 epochs by default),
# which prints its test accuracy and writes its weights (SafeTensors) and its
# training-step IR and DOT graph to out/04_mnist_mlp/. Extra arguments go to example 04
# (e.g. --epochs 2 --seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== examples/01_scalar_autograd"
./build/examples/01_scalar_autograd
echo "== examples/04_mnist_mlp"
./build/examples/04_mnist_mlp --out out/04_mnist_mlp "$@"
