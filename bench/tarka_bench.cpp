// TARKA, measured: example 15's knowledge base (transitivity over n^3 triples,
// irreflexivity, asymmetry from text, the chain facts; LTN stable product logic with the
// Lukasiewicz implication, forall = pMeanError p = 4, SemanticLoss) forward + gradient of
// every weight, for n = 16, 32, 64 entities: ours (formulas grounded from text; the
// interpreter and the C99 JIT) vs the same formulas hand-written in libtorch. Same weights,
// same thread count (--threads, 1), each measurement in a child process; the losses are
// compared (f32) so the three compute the same thing. Median ms per step.
//   tarka_bench [--iters N] [--threads N]
#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <minigrad/frontier/tarka.hpp>
#include <minigrad/minigrad.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"
#include "bench/uniform.hpp"
#include "bench/torch_tarka.hpp"

namespace {

namespace tk = mg::frontier::tarka;
using mg::bench::in_child;
using mg::bench::uniform;

struct Result {
  double ms = -1, loss = 0;
};


Result ours(const mg::bench::TarkaWeights& w, mg::Backend backend, int iters) {
  using namespace mg;
  const std::int64_t n = w.n, d = w.d, h = w.h;
  Graph g;
  Tensor E = g.input("E", f32, {n, d}), W1 = g.input("W1", f32, {2 * d, h}), b1 = g.input("b1", f32, {h});
  Tensor W2 = g.input("W2", f32, {h, 1}), b2 = g.input("b2", f32, {1});
  auto rel = [&](const Tensor& a, const Tensor& b) {
    return Tensor(sigmoid(matmul(relu(matmul(concat({a, b}, 1), W1) + b1), W2) + b2)).reshape({-1});
  };
  tk::Bindings kb;
  kb.predicates["R"] = [&](const std::vector<Tensor>& a) { return rel(a[0], a[1]); };
  for (const char* v : {"x", "y", "z"}) kb.domains[v] = E;
  kb.logic = {.implication = tk::Implication::lukasiewicz, .p_forall = 4};
  std::vector<tk::Truth> kbase;
  for (const char* text : {"forall x, y, z: R(x, y) & R(y, z) -> R(x, z)", "forall x: ~R(x, x)",
                           "forall x, y: R(x, y) -> ~R(y, x)"})
    kbase.push_back(tk::ground(text, kb));
  std::vector<std::int64_t> src, dst;
  for (std::int64_t i = 0; i + 1 < n; ++i) src.push_back(i), dst.push_back(i + 1);
  Tensor a = index_select(E, 0, g.constant(Array::from_vector<std::int64_t>({n - 1}, src)));
  Tensor b = index_select(E, 0, g.constant(Array::from_vector<std::int64_t>({n - 1}, dst)));
  kbase.push_back(tk::forall(tk::Truth(rel(a, b), kb.logic)));
  Tensor loss = tk::SemanticLoss{}(kbase);
  auto grads = grad(loss, {E, W1, b1, W2, b2});
  std::vector<Tensor> outs{loss};
  outs.insert(outs.end(), grads.begin(), grads.end());
  Executable exe = compile(g, outs, backend);
  std::vector<Feed> feeds{{"E", Array::from_vector<float>({n, d}, w.E)}, {"W1", Array::from_vector<float>({2 * d, h}, w.W1)},
                          {"b1", Array::from_vector<float>({h}, w.b1)},   {"W2", Array::from_vector<float>({h, 1}, w.W2)},
                          {"b2", Array::from_vector<float>({1}, w.b2)}};
  Result r;
  r.ms = mg::bench::median_ms([&] { r.loss = exe.run(feeds)[0].item(); }, 1, iters);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 5, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: tarka_bench [--iters N] [--threads N]\n");
      return 2;
    }
  }
  std::printf("TARKA knowledge base (example 15's) loss + gradients, f32, dim 8, hidden 32, %d thread(s)\n", threads);
  std::printf("%5s %-20s %10s %12s %14s\n", "n", "variant", "step ms", "loss", "step / torch");
  bool agree = true;
  for (int n : {16, 32, 64}) {
    mg::bench::TarkaWeights w{n, 8, 32, uniform(n * 8, 1, 1.0), uniform(16 * 32, 2, 0.25), uniform(32, 3, 0.1),
                              uniform(32, 4, 0.18), uniform(1, 5, 0.1)};
    auto child = [&](auto&& f) {
      return in_child([&] {
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
        return f();
      }, Result{});
    };
    Result torch;
#if MG_BENCH_TORCH
    torch = child([&] {
      auto r = mg::bench::torch_tarka_step(w, threads, 1, iters);
      return Result{r.ms, r.loss};
    });
#endif
    const Result interp = child([&] { return ours(w, mg::Backend::interpreter, iters); });
    const Result c99 = child([&] { return ours(w, mg::Backend::c99, iters); });
    auto row = [&](const char* name, const Result& r) {
      char ratio[32] = "-";
      if (torch.ms > 0 && r.ms > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.ms / torch.ms);
      std::printf("%5d %-20s %10.3f %12.7f %14s\n", n, name, r.ms, r.loss, ratio);
      if (torch.ms > 0 && r.ms > 0 && std::abs(r.loss - torch.loss) > 1e-4) agree = false;
    };
    row("ours (interpreter)", interp);
    row("ours (C99 JIT)", c99);
#if MG_BENCH_TORCH
    row("libtorch", torch);
#else
    std::printf("%5d %-20s (built without libtorch-dev)\n", n, "libtorch");
#endif
  }
  std::printf(agree ? "losses agree with libtorch (|diff| <= 1e-4)\n" : "losses DISAGREE with libtorch\n");
  return agree ? 0 : 1;
}
