// See fma_peak.hpp. Compiled -march=native (its own static library): 12 accumulators of
// the widest vector type, each an FMA chain (latency 4 x 2 ports needs 8 in flight; 12
// leave slack and still fit AVX2's 16 registers with the two constants).
#include "bench/fma_peak.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace mg::bench {

namespace {

#if defined(__AVX512F__)
using V = __m512;
constexpr int kLanes = 16;
inline V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline V set1(float x) { return _mm512_set1_ps(x); }
#elif defined(__FMA__)
using V = __m256;
constexpr int kLanes = 8;
inline V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V set1(float x) { return _mm256_set1_ps(x); }
#else
using V = float __attribute__((vector_size(16)));
constexpr int kLanes = 4;
inline V fma(V a, V b, V c) { return a * b + c; }
inline V set1(float x) { return V{x, x, x, x}; }
#endif
constexpr int kChains = 12;

// `iters` rounds of kChains FMAs; the result feeds a volatile so nothing is elided.
__attribute__((noinline)) float chains(long iters, float seed) {
  V acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = set1(seed + static_cast<float>(i));
  const V x = set1(0.999999f), y = set1(1e-6f);  // converges to 1: no overflow, no denormals
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = fma(acc[i], x, y);
  V s = acc[0];
  for (int i = 1; i < kChains; ++i) s += acc[i];
  float out = 0;
  for (int l = 0; l < kLanes; ++l) out += s[l];
  return out;
}

}  // namespace

const char* fma_peak_isa() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__FMA__)
  return "AVX2+FMA";
#else
  return "SSE/NEON (no FMA)";
#endif
}

double fma_burst_gflops(int threads, double seconds) {
  // A round of kChains FMAs takes kChains / 2 cycles (two FMA pipes), ~2 ns at 3 GHz.
  const long iters = std::max(1000L, static_cast<long>(seconds / 2e-9));
  static volatile float sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    const float v = chains(iters, static_cast<float>(omp_get_thread_num()));
#pragma omp critical
    sink = sink + v;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * kLanes * kChains * double(iters) * threads / s * 1e-9;
}

double fma_peak_gflops(int threads, int repeats) {
  // Short bursts (~0.2 ms), the best one: a limit is a maximum, and on a shared machine a
  // burst that no other process interrupted is the only clean sample.
  double best = 0;
  chains(100'000, 0.f);  // warm-up: the clock ramps up, the thread pool starts
  for (int r = 0; r < repeats; ++r) best = std::max(best, fma_burst_gflops(threads));
  return best;
}

}  // namespace mg::bench
