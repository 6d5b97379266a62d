// How the threads of our GEMM split C (ir/ops/gemm_c99.cpp): column chunks of the same rows
// (one B scratch slice: the split before row blocks, and still the one when a caller gives
// a single slice) against row blocks (a slice per thread: what the interpreter passes and a
// C99 module plans), on the MLP step's products and two cubes, calls alternating.
// Calls the copy of the generated GEMM the library runs on this CPU (native_kernels.hpp),
// so the split is the only difference. Prints median and best us per call, and GFLOP/s as a fraction of
// the measured FMA peak.   gemm_split_bench [--iters N]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/fma_peak.hpp"
#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/native_kernels.hpp"

namespace {

struct Product {
  const char* name;
  std::int64_t m, n, k;
  bool ta, tb;  // operand stored transposed (read in place)
};

struct Stats {
  std::vector<double> us;
  double median() {
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }
  double best() { return *std::min_element(us.begin(), us.end()); }
};

}  // namespace

int main(int argc, char** argv) {
  int iters = 1000;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--iters N]\n", argv[0]);
      return 2;
    }
  }
  const mg::ir::native::Kernels<float>* ours = mg::ir::native::kernels<float>();
  if (!ours) {
    std::printf("no AVX2/AVX-512 copy of our GEMM on this CPU: nothing to compare\n");
    return 0;
  }
  const int threads = omp_get_max_threads();
  const double peak1 = mg::bench::fma_peak_gflops(1), peak = mg::bench::fma_peak_gflops(threads);
  std::printf("FMA peak (%s, measured): %.1f GFLOP/s on 1 thread, %.1f on %d\n", mg::bench::fma_peak_isa(), peak1,
              peak, threads);
  std::printf("median (best) us per call; column chunks: 1 B slice, row blocks: %d slices\n", threads);
  std::printf("%-24s %22s %22s %22s %9s\n", "product", "1 thread", "column chunks", "row blocks", "rows/cols");
  const Product products[] = {
      {"x @ W      128x128x784", 128, 128, 784, false, false}, {"x @ W.T    128x128x784", 128, 128, 784, false, true},
      {"x.T @ g    784x128x128", 784, 128, 128, true, false},  {"g.T @ x    128x784x128", 128, 784, 128, true, false},
      {"256^3", 256, 256, 256, false, false},                   {"1024^3", 1024, 1024, 1024, false, false}};
  for (const Product& p : products) {
    std::vector<float> a(static_cast<std::size_t>(p.m * p.k)), b(static_cast<std::size_t>(p.k * p.n)),
        c(static_cast<std::size_t>(p.m * p.n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97) * 0.01f - 0.4f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 89) * 0.01f - 0.4f;
    std::vector<float> scratch(static_cast<std::size_t>(mg::ir::gemm_c99::bpack_bytes(p.n, p.k, 4, threads) / 4 + 1));
    const std::int64_t ars = p.ta ? 1 : p.k, acs = p.ta ? p.m : 1, brs = p.tb ? 1 : p.n, bcs = p.tb ? p.k : 1;
    const int n = p.m * p.n * p.k > (std::int64_t{1} << 27) ? std::max(20, iters / 50) : iters;
    Stats one, cols, rows;
    auto timed = [&](Stats& s, int nt, std::int64_t slices) {
      omp_set_num_threads(nt);
      const auto t0 = std::chrono::steady_clock::now();
      ours->gemm(p.m, p.n, p.k, a.data(), ars, acs, b.data(), brs, bcs, c.data(), scratch.data(), slices);
      s.us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    };
    for (int i = 0; i < n + 5; ++i) {
      timed(one, 1, 1);
      timed(cols, threads, 1);
      timed(rows, threads, threads);
    }
    omp_set_num_threads(threads);
    const double flop = 2.0 * static_cast<double>(p.m * p.n * p.k);
    auto cell = [&](Stats& s, double pk) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f (%.1f) %3.0f%%", s.median(), s.best(), 100 * flop / (s.median() * 1e3) / pk);
      return std::string(buf);
    };
    const std::string c1 = cell(one, peak1), cc = cell(cols, peak), cr = cell(rows, peak);
    std::printf("%-24s %22s %22s %22s %9.2f\n", p.name, c1.c_str(), cc.c_str(), cr.c_str(), rows.median() / cols.median());
  }
  std::printf("(%% of the FMA peak of the threads used, from the median)\n");
}
