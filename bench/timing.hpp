// Median wall time of a callable, after warm-up: the one timing rule every benchmark
// here uses, so ratios compare like with like.
#pragma once
#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace mg::bench {

// The middle element (the upper one of an even count).
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

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
  return median(std::move(ms));
}

}  // namespace mg::bench
