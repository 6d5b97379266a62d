// The libtorch side of bench/tarka_bench.cpp: example 15's knowledge-base loss (LTN stable
// product logic, Lukasiewicz implication) and its gradient, written with torch ops.
// Declared without torch headers so only torch_tarka.cpp pays their compile time.
#pragma once
#include <vector>

namespace mg::bench {

struct TarkaWeights {  // row-major f32: E [n, d], W1 [2d, h], b1 [h], W2 [h, 1], b2 [1]
  int n, d, h;
  std::vector<float> E, W1, b1, W2, b2;
};
struct TarkaTorchResult {
  double ms = -1, loss = 0;
};

// Median ms of forward (loss) + backward (gradients of every weight), one thread count.
TarkaTorchResult torch_tarka_step(const TarkaWeights& w, int threads, int warmup, int iters);

}  // namespace mg::bench
