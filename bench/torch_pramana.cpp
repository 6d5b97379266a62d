// libtorch Monte Carlo for bench/pramana_bench.cpp.
#include "bench/torch_pramana.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"

namespace mg::bench {

double torch_mc_ms(const MlpWeights& w, int points, int draws, float sd, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::NoGradGuard no_grad;
  auto t = [](const std::vector<float>& v, std::vector<int64_t> s) {
    return torch::from_blob(const_cast<float*>(v.data()), s, torch::kFloat32).clone();
  };
  auto w1 = t(w.w1, {64, 8}), b1 = t(w.b1, {64}), w2 = t(w.w2, {64, 64}), b2 = t(w.b2, {64}), w3 = t(w.w3, {1, 64}),
       b3 = t(w.b3, {1});
  auto mean = torch::linspace(-4, 4, points).view({points, 1, 1}).expand({points, draws, 8});
  torch::manual_seed(0);
  return median_ms(
      [&] {
        auto x = (mean + sd * torch::randn({points, draws, 8})).reshape({points * draws, 8});
        auto h = torch::tanh(torch::nn::functional::linear(torch::relu(torch::nn::functional::linear(x, w1, b1)), w2, b2));
        auto y = torch::nn::functional::linear(h, w3, b3).view({points, draws});
        auto m = y.mean(1), v = y.var(1);
        (void)m.data_ptr<float>(), (void)v.data_ptr<float>();
      },
      warmup, iters);
}

}  // namespace mg::bench
