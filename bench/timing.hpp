// Median wall time of a callable, after warm-up: the one timing rule every benchmark
// here uses, so ratios compare like with like.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

namespace mg::bench {

template <class F>
double median_ms(F&& step, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) step();
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + iters / 2, ms.end());
  return ms[static_cast<std::size_t>(iters / 2)];
}

}  // namespace mg::bench
