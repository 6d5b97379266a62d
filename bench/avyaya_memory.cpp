// AVYAYA's claim, measured: the planned peak bytes of a training step (forward, backward,
// SGD update; f32, batch 128, halves of 32, f and g Linear(32,64) -> tanh -> Linear(64,32))
// at depth 10, 50, 100, 500, for the reversible network (one custom_vjp that rebuilds the
// activations in its backward) and the same network by ordinary backprop. Columns:
//   params     the parameters' bytes (and so their gradients', and each optimizer slot's):
//              they grow with depth whatever the method; no peak below counts them
//   grad peak  the planned peak of the gradients' own graph (gradients requested as
//              outputs, so not pooled): the activations and temporaries only
//   step peak  the planned peak of the whole compiled step (forward, backward, SGD
//              update, the default pass pipeline): the temporaries alive at once,
//              activations and gradients included; parameters, their next values and
//              optimizer state are persistent state, not counted. Each update runs right
//              after its gradient (runtime/step_order.hpp), so a gradient dies at once
//   step ms    median ms per step, interpreter, --threads (1); rev / ord is RevNet's
//              recomputation overhead; ord / torch compares with libtorch on the same net
// Each measurement runs in a child process at the same thread count.
//   avyaya_memory [--iters N] [--threads N] [--depths 10,50,100,500]
#include <cblas.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <minigrad/frontier/avyaya.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"
#if MG_BENCH_TORCH
#include "bench/avyaya_torch.hpp"
#endif

namespace {

using namespace mg;
using Mlp = nn::Sequential<nn::Linear, nn::Tanh, nn::Linear>;
using RevNet = frontier::avyaya::ReversibleSequential<frontier::avyaya::ReversibleBlock<Mlp, Mlp>>;
constexpr int kBatch = 128, kHalf = 32, kHidden = 64;

struct Result {
  double grad_peak = -1, step_peak = -1, step_ms = -1, param_bytes = -1;
};

Result ours(int depth, bool reversible, int iters) {
  Graph g;
  RevNet net;
  for (int i = 0; i < depth; ++i)
    net.blocks.emplace_back(Mlp(nn::Linear(kHalf, kHidden), nn::Tanh{}, nn::Linear(kHidden, kHalf)),
                            Mlp(nn::Linear(kHalf, kHidden), nn::Tanh{}, nn::Linear(kHidden, kHalf)));
  nn::bind(net, g);
  Tensor x = g.input("x", f32, {kBatch, 2 * kHalf});
  Tensor y = reversible ? net(x) : net.ordinary(x);
  Tensor loss = (y * y).mean();
  std::vector<Tensor> wrt;
  for (nn::Parameter* p : nn::parameters(net)) wrt.push_back(p->tensor);
  Result r;
  r.grad_peak = static_cast<double>(compile(g, grad(loss, wrt)).peak_bytes());
  auto step = nn::compile_train(g, loss, net, nn::SGD{.lr = 0.01});
  r.step_peak = static_cast<double>(step.executable().peak_bytes());
  r.param_bytes = static_cast<double>(nn::count_parameters(net) * 4);
  Array xv(Type{f32, {kBatch, 2 * kHalf}});
  for (std::int64_t i = 0; i < xv.numel(); ++i) xv.set(i, std::sin(0.37 * static_cast<double>(i)));
  double sink = 0;
  r.step_ms = bench::median_ms([&] { sink += step.run({{"x", xv}}); }, 1, iters);
  if (!(sink == sink)) throw std::runtime_error("diverged");
  return r;
}

std::string mib(double b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", b / (1024.0 * 1024.0));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 5, threads = 1;
  std::vector<int> depths{10, 50, 100, 500};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--depths")) {
      depths.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string t; std::getline(ss, t, ',');) depths.push_back(std::stoi(t));
    } else {
      std::fprintf(stderr, "usage: avyaya_memory [--iters N] [--threads N] [--depths 10,50,100,500]\n");
      return 2;
    }
  }
  auto child = [&](auto&& f) {
    return bench::in_child([&] {
      omp_set_num_threads(threads);
      openblas_set_num_threads(threads);
      return f();
    }, Result{});
  };
  std::printf("coupling network training step, f32, batch %d, halves %d, hidden %d, SGD, %d thread(s), interpreter\n",
              kBatch, kHalf, kHidden, threads);
  std::printf("%6s %10s | %14s %14s | %14s %14s | %9s %9s %9s %9s %9s\n", "depth", "params MiB", "grad peak rev",
              "grad peak ord", "step peak rev", "step peak ord", "rev ms", "ord ms", "torch ms", "rev/ord", "ord/torch");
  for (int depth : depths) {
    const Result rev = child([&] { return ours(depth, true, iters); });
    const Result ord = child([&] { return ours(depth, false, iters); });
    Result torch;
#if MG_BENCH_TORCH
    torch.step_ms = child([&] { return Result{-1, -1, bench::torch_coupling_step_ms(depth, kBatch, kHalf, kHidden, threads, 1, iters), -1}; }).step_ms;
#endif
    auto ratio = [](double a, double b) {
      char s[32] = "-";
      if (a > 0 && b > 0) std::snprintf(s, sizeof s, "%.2f", a / b);
      return std::string(s);
    };
    std::printf("%6d %10s | %14s %14s | %14s %14s | %9.2f %9.2f %9.2f %9s %9s\n", depth, mib(rev.param_bytes).c_str(),
                mib(rev.grad_peak).c_str(), mib(ord.grad_peak).c_str(), mib(rev.step_peak).c_str(),
                mib(ord.step_peak).c_str(), rev.step_ms, ord.step_ms, torch.step_ms,
                ratio(rev.step_ms, ord.step_ms).c_str(), ratio(ord.step_ms, torch.step_ms).c_str());
    std::fflush(stdout);
  }
  std::printf("(peaks in MiB, planned by the memory plan: temporaries (activations, gradients) alive at once;\n"
              " parameters and optimizer state are persistent state, not counted)\n");
  return 0;
}
