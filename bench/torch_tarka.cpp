// libtorch version of the TARKA knowledge base (bench/tarka_bench.cpp): the same formulas
// and LTN operators, the relation evaluated once on every pair.
#include "bench/torch_tarka.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"

namespace mg::bench {

namespace {
constexpr double kEps = 1e-4;
torch::Tensor pi0(const torch::Tensor& x) { return (1 - kEps) * x + kEps; }
torch::Tensor pi1(const torch::Tensor& x) { return (1 - kEps) * x; }
torch::Tensor forall(const torch::Tensor& x, double p) { return 1 - (1 - pi1(x)).pow(p).mean().pow(1 / p); }
torch::Tensor implies_luk(const torch::Tensor& a, const torch::Tensor& b) { return torch::clamp_max(1 - a + b, 1.0); }
torch::Tensor t(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone().requires_grad_(true);
}
}  // namespace

TarkaTorchResult torch_tarka_step(const TarkaWeights& w, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  const int n = w.n, d = w.d;
  auto E = t(w.E, {n, d}), W1 = t(w.W1, {2 * d, w.h}), b1 = t(w.b1, {w.h}), W2 = t(w.W2, {w.h, 1}), b2 = t(w.b2, {1});
  auto rel = [&](const torch::Tensor& a, const torch::Tensor& b) {
    return torch::sigmoid(torch::relu(torch::cat({a, b}, 1).matmul(W1) + b1).matmul(W2) + b2).reshape({-1});
  };
  auto src = torch::arange(0, n - 1, torch::kLong), dst = src + 1;
  TarkaTorchResult r;
  auto step = [&] {
    auto left = E.unsqueeze(1).expand({n, n, d}).reshape({n * n, d});
    auto right = E.unsqueeze(0).expand({n, n, d}).reshape({n * n, d});
    auto R = rel(left, right).reshape({n, n});
    auto ante = pi0(R.unsqueeze(2)) * pi0(R.unsqueeze(0));  // AndProd(R(x, y), R(y, z))
    auto trans = forall(implies_luk(ante, R.unsqueeze(1)), 4);
    auto irref = forall(1 - R.diagonal(), 4);
    auto asym = forall(implies_luk(R, 1 - R.t()), 4);
    auto facts = forall(rel(E.index_select(0, src), E.index_select(0, dst)), 4);
    auto sat = forall(torch::stack({trans, irref, asym, facts}), 2);
    auto loss = 1 - sat;
    for (auto* p : {&E, &W1, &b1, &W2, &b2}) p->mutable_grad() = torch::Tensor();
    loss.backward();
    r.loss = loss.item<double>();
  };
  r.ms = median_ms(step, warmup, iters);
  return r;
}

}  // namespace mg::bench
