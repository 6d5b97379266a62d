// Files in and out: SafeTensors checkpoints, NumPy .npy arrays, IDX datasets (Fashion-MNIST),
// seeded batching (Poisson-sampled batches for DP-SGD too), and graphs as DOT text or SVG/PNG
// pictures (Graphviz). Light headers only; included by minigrad.hpp.
#pragma once
#include "minigrad/ir/dot.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"
#include "minigrad/runtime/io/npy.hpp"
#include "minigrad/runtime/io/poisson_batches.hpp"
#include "minigrad/runtime/io/render.hpp"
#include "minigrad/runtime/io/safetensors.hpp"
