// The libtorch side of bench/pramana_bench.cpp: Monte Carlo through the same 8-64-64-1
// ReLU/tanh MLP (f32), declared without torch headers so only torch_pramana.cpp pays them.
#pragma once
#include <vector>

namespace mg::bench {

struct MlpWeights {
  std::vector<float> w1, b1, w2, b2, w3, b3;  // PyTorch layouts: w [out, in]
};
// Median ms of one forward over `rows` draws x = mean + sd * N(0, 1) of 8 sensors (the draws
// made inside, as a Monte Carlo estimate does), reduced to the per-point mean and variance.
double torch_mc_ms(const MlpWeights& w, int points, int draws, float sd, int threads, int warmup, int iters);

}  // namespace mg::bench
