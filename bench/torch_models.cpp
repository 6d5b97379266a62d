// libtorch reference models for bench/train_step_bench.cpp and bench/c99_bench.cpp (see
// torch_models.hpp).
#include "bench/torch_models.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"
#include "bench/torch_fashion_modules.hpp"

namespace mg::bench {

namespace {

using torch_fashion::CnnImpl;
using torch_fashion::MlpImpl;

template <class Model>
double time_steps(Model& model, const std::vector<int64_t>& x_shape, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  torch::Tensor x = torch::randn(x_shape);
  torch::Tensor y = torch::randint(0, 10, {x_shape[0]}, torch::kLong);
  torch::optim::Adam opt(model.parameters(), torch::optim::AdamOptions(1e-3));
  float sink = 0;
  const double ms = median_ms(
      [&] {
        opt.zero_grad();
        torch::Tensor loss = torch::nn::functional::cross_entropy(model.forward(x), y);
        loss.backward();
        opt.step();
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch benchmark diverged");
  return ms;
}

}  // namespace

double torch_mlp_step_ms(int threads, int warmup, int iters) {
  MlpImpl model;
  return time_steps(model, {128, 784}, threads, warmup, iters);
}

double torch_mlp_forward_ms(int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  MlpImpl model;
  torch::InferenceMode guard;
  const torch::Tensor x = torch::randn({1, 784});
  float sink = 0;
  const double ms = median_ms([&] { sink += model.forward(x).data_ptr<float>()[0]; }, warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch forward produced a non-finite value");
  return ms;
}

double torch_cnn_step_ms(int threads, int warmup, int iters) {
  CnnImpl model;
  return time_steps(model, {64, 1, 28, 28}, threads, warmup, iters);
}

}  // namespace mg::bench
