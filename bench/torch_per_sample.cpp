// libtorch per-sample gradients by a loop of single-example backward passes; see
// torch_per_sample.hpp. The models are examples 04 and 05 (as bench/torch_models.cpp).
#include "bench/torch_per_sample.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"
#include "bench/torch_fashion_modules.hpp"

namespace mg::bench {

namespace {

using torch_fashion::CnnImpl;
using torch_fashion::MlpImpl;

template <class Model>
double time_loop(Model& model, std::vector<int64_t> x_shape, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  const int64_t batch = x_shape[0];
  torch::Tensor x = torch::randn(x_shape);
  torch::Tensor y = torch::randint(0, 10, {batch}, torch::kLong);
  auto params = model.parameters();
  std::vector<torch::Tensor> out;  // [batch, ...] per parameter, as vmap(grad) returns
  for (auto& p : params) {
    auto s = p.sizes().vec();
    s.insert(s.begin(), batch);
    out.push_back(torch::empty(s));
  }
  float sink = 0;
  const double ms = median_ms(
      [&] {
        for (int64_t b = 0; b < batch; ++b) {
          model.zero_grad();
          torch::Tensor loss = torch::nn::functional::cross_entropy(model.forward(x.slice(0, b, b + 1)),
                                                                    y.slice(0, b, b + 1));
          loss.backward();
          for (std::size_t k = 0; k < params.size(); ++k) out[k][b].copy_(params[k].grad());
        }
        sink += out[0][0].view(-1)[0].item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch per-sample loop produced a non-finite value");
  return ms;
}

}  // namespace

double torch_mlp_per_sample_loop_ms(int batch, int threads, int warmup, int iters) {
  MlpImpl model;
  return time_loop(model, {batch, 784}, threads, warmup, iters);
}

double torch_cnn_per_sample_loop_ms(int batch, int threads, int warmup, int iters) {
  CnnImpl model;
  return time_loop(model, {batch, 1, 28, 28}, threads, warmup, iters);
}

}  // namespace mg::bench
