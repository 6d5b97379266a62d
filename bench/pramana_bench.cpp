// PRAMANA, measured: the predictive mean and variance of an 8-64-64-1 ReLU/tanh MLP (f32)
// under Gaussian input noise (sd 0.3) at 161 points, three ways side by side in one run,
// at the same thread count (--threads, default 1):
//   one pass   moment propagation (the moments transformation), interpreter
//   MC ours    Monte Carlo with --draws draws per point (noise drawn in the graph), interpreter
//   MC torch   the same Monte Carlo in libtorch (when built with libtorch-dev)
// Prints median ms and the ratios; the machine may be shared and loaded (say so with numbers).
//   pramana_bench [--draws N] [--threads N] [--iters N]
#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <minigrad/frontier/pramana.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/ir/builder.hpp>

#include "bench/timing.hpp"
#include "bench/uniform.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_pramana.hpp"
#endif

namespace {
constexpr std::int64_t kPoints = 161, kIn = 8, kHidden = 64;
constexpr float kSd = 0.3f;
}  // namespace

int main(int argc, char** argv) {
  using namespace mg;
  int draws = 1000, threads = 1, iters = 9;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--draws")) draws = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
  }
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  using mg::bench::uniform;
  const std::vector<float> w1 = uniform(kHidden * kIn, 1, 0.35), b1 = uniform(kHidden, 2, 0.3),
                           w2 = uniform(kHidden * kHidden, 3, 0.125), b2 = uniform(kHidden, 4, 0.1),
                           w3 = uniform(kHidden, 5, 0.125), b3 = uniform(1, 6, 0.1);
  auto net = [&](Graph& g, const Tensor& x) {
    auto c = [&](const std::vector<float>& v, Shape s) { return g.constant(Array::from_vector<float>(s, v)); };
    Tensor h = relu(matmul(x, c(w1, {kHidden, kIn}).T()) + c(b1, {kHidden}));
    h = tanh(matmul(h, c(w2, {kHidden, kHidden}).T()) + c(b2, {kHidden}));
    return Tensor(matmul(h, c(w3, {1, kHidden}).T()) + c(b3, {1}));
  };
  Array mean(Type{f32, {kPoints, kIn}}), var = Array::full(Type{f32, {kPoints, kIn}}, kSd * kSd);
  for (std::int64_t i = 0; i < kPoints; ++i)
    for (std::int64_t j = 0; j < kIn; ++j) mean.set(i * kIn + j, -4.0 + 8.0 * i / (kPoints - 1));

  // One pass.
  Graph g;
  Tensor m = g.input("mean", f32, {kPoints, kIn}), v = g.input("var", f32, {kPoints, kIn});
  auto y = frontier::pramana::propagate([&](const Tensor& x) { return net(g, x); }, frontier::pramana::gaussian(m, v));
  auto one = compile(g, {y.mean, y.var});
  const double one_ms = bench::median_ms([&] { one.run({{"mean", mean}, {"var", var}}); }, 2, iters);

  // Monte Carlo in our graph: the draws are a random_normal node, a fresh stream per run
  // through random_normal_step keyed by a counter input.
  Graph mc;
  Tensor mm = mc.input("mean", f32, {kPoints, 1, kIn}), step = mc.input("step", i64, {});
  Tensor noise(ir::make_op(ir::op("random_normal_step"), {step.value()},
                           {{"shape", Shape{kPoints, draws, kIn}}, {"dtype", f32}, {"seed", std::int64_t{5}},
                            {"std", static_cast<double>(kSd)}}));
  Tensor x = (mm + noise).reshape({kPoints * draws, kIn});
  Tensor out = net(mc, x).reshape({kPoints, draws});
  auto mce = compile(mc, {out.mean(1), out.var(1)});
  const Array mean3 = Array::from_vector<float>({kPoints, 1, kIn}, std::vector<float>(mean.span<float>().begin(), mean.span<float>().end()));
  std::int64_t counter = 0;
  const double mc_ms = bench::median_ms([&] { mce.run({{"mean", mean3}, {"step", Array::scalar(i64, counter++)}}); }, 1,
                                        std::max(3, iters / 3));

  std::printf("PRAMANA: predictive mean/variance of an 8-64-64-1 MLP at %lld points, %d thread(s)\n",
              static_cast<long long>(kPoints), threads);
  std::printf("  one pass (moment propagation)      %9.3f ms\n", one_ms);
  std::printf("  Monte Carlo, ours (%5d draws)     %9.3f ms   one pass x%.1f faster\n", draws, mc_ms, mc_ms / one_ms);
#if MG_BENCH_TORCH
  bench::MlpWeights w{w1, b1, w2, b2, w3, b3};
  const double torch_ms = bench::torch_mc_ms(w, static_cast<int>(kPoints), draws, kSd, threads, 1, std::max(3, iters / 3));
  std::printf("  Monte Carlo, libtorch (%5d draws) %9.3f ms   one pass x%.1f faster; ours/libtorch MC %.2f\n", draws,
              torch_ms, torch_ms / one_ms, mc_ms / torch_ms);
#else
  std::printf("  Monte Carlo, libtorch: not built (install libtorch-dev, reconfigure)\n");
#endif
  return 0;
}
