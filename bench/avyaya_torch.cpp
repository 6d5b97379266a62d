// libtorch reference for bench/avyaya_memory.cpp (see avyaya_torch.hpp): y1 = x1 + f(x2),
// y2 = x2 + g(y1) per block, f and g Linear -> tanh -> Linear, loss mean(y^2), SGD.
#include "bench/avyaya_torch.hpp"

#include <torch/torch.h>

#include <cmath>

#include "bench/timing.hpp"

namespace mg::bench {

double torch_coupling_step_ms(int depth, int batch, int half, int hidden, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  auto mlp = [&] {
    return torch::nn::Sequential(torch::nn::Linear(half, hidden), torch::nn::Tanh(), torch::nn::Linear(hidden, half));
  };
  std::vector<torch::nn::Sequential> fs, gs;
  std::vector<torch::Tensor> params;
  for (int i = 0; i < depth; ++i) {
    fs.push_back(mlp());
    gs.push_back(mlp());
    for (auto& p : fs.back()->parameters()) params.push_back(p);
    for (auto& p : gs.back()->parameters()) params.push_back(p);
  }
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.01));
  const torch::Tensor x = torch::randn({batch, 2 * half});
  float sink = 0;
  const double ms = median_ms(
      [&] {
        opt.zero_grad();
        auto h = x.chunk(2, 1);
        torch::Tensor a = h[0], b = h[1];
        for (int i = 0; i < depth; ++i) {
          a = a + fs[static_cast<std::size_t>(i)]->forward(b);
          b = b + gs[static_cast<std::size_t>(i)]->forward(a);
        }
        torch::Tensor loss = torch::cat({a, b}, 1).pow(2).mean();
        loss.backward();
        opt.step();
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch coupling benchmark diverged");
  return ms;
}

}  // namespace mg::bench
