// SPANDA's training step, measured: example 16's spiking network (784 -> 256 -> 10 LIF,
// T = 25, batch 128, ce_rate_loss, Adam; BPTT through one scan) on our interpreter against
// libtorch (a C++ loop over the steps, snnTorch's atan surrogate as an autograd Function),
// each in a child process at the same thread count, medians side by side with the ratio.
//   spanda_bench [--iters N] [--threads N]
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_spanda.hpp"
#endif

namespace {

constexpr int T = 25, B = 128, H = 256;
namespace sp = mg::frontier::spanda;

double ours(int iters) {
  const sp::Leaky lif{.beta = 0.9, .threshold = 1.0};
  auto net = sp::SpikingSequential{sp::SpikingLinear(784, H, lif), sp::SpikingLinear(H, 10, lif)};
  mg::Graph g;
  mg::nn::bind(net, g, 0);
  mg::Tensor xs = g.input("spikes", mg::f32, {T, B, 784});
  mg::Tensor y = g.input("y", mg::i64, {B});
  auto step = mg::nn::compile_train(g, sp::ce_rate_loss(net(xs).spikes, y), net, mg::nn::Adam{.lr = 2e-3});
  const mg::Array spikes = sp::rate_encode(mg::Array::full(mg::Type{mg::f32, {B, 784}}, 0.3), T, 1);
  mg::Array labels(mg::Type{mg::i64, {B}});
  for (int i = 0; i < B; ++i) labels.set(i, i % 10);
  double sink = 0;
  const double ms = mg::bench::median_ms([&] { sink += step.run({{"spikes", spikes}, {"y", labels}}); }, 1, iters);
  if (!(sink == sink)) throw std::runtime_error("diverged");
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 10, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: spanda_bench [--iters N] [--threads N]\n");
      return 2;
    }
  }
  auto fresh = [&](auto&& f) {
    return mg::bench::in_child([&] {
      omp_set_num_threads(threads);
      openblas_set_num_threads(threads);
      return f();
    }, -1.0);
  };
  std::printf("SNN training step 784-%d-10, T = %d, batch %d, f32, %d thread(s); median of %d\n", H, T, B, threads, iters);
  const double mine = fresh([&] { return ours(iters); });
  std::printf("%-28s %10.1f ms\n", "miniGrad (scan, interpreter)", mine);
#if MG_BENCH_TORCH
  const double torch = fresh([&] { return mg::bench::torch_snn_step_ms(T, B, H, threads, 1, iters); });
  std::printf("%-28s %10.1f ms\n", "libtorch (C++ loop)", torch);
  if (mine > 0 && torch > 0) std::printf("ratio miniGrad / libtorch: %.2f\n", mine / torch);
#else
  std::printf("libtorch: built without libtorch-dev\n");
#endif
  return 0;
}
