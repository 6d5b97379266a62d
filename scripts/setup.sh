#!/usr/bin/env bash
# Installs what miniGrad needs (Debian packages) when something is missing, then
# configures and builds the release tree in ./build. Safe to run again: it only does
# what is missing. Usage: scripts/setup.sh [extra meson setup options]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  meson ninja-build pkg-config g++
  libxtensor-dev libxsimd-dev libopenblas-dev libopenblas-openmp-dev libboost-dev
  libz3-dev libgraphviz-dev libgtest-dev nlohmann-json3-dev
  libboost-program-options-dev python3-numpy python3-mpmath  # mpmath: the privacy tests' oracle
  zlib1g-dev dataset-fashion-mnist ccache
  fortunes  # examples 06/07: English text (fortune cookies) for the character-level GPT
  clang gcc-arm-none-eabi libnewlib-arm-none-eabi  # C99 export tests: clang, Cortex-M4 cross-compile
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing missing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  echo "== configuring ./build (release)"
  rm -rf build
  # Every optional part enabled: a missing Z3, gtest or Graphviz fails here, never skips tests.
  meson setup build --buildtype=release -Dtests=enabled -Dexamples=enabled -Dbench=enabled \
    -Dtool=enabled -Dgraphviz=enabled -Dz3=enabled "$@"
fi
echo "== building"
ninja -C build
