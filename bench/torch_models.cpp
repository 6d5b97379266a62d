// libtorch reference models for bench/train_step_bench.cpp and bench/c99_bench.cpp (see
// torch_models.hpp).
#include "bench/torch_models.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"

namespace mg::bench {

namespace {

struct MlpImpl : torch::nn::Module {
  torch::nn::Linear fc1{784, 128}, fc2{128, 10};
  MlpImpl() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
};

struct CnnImpl : torch::nn::Module {
  torch::nn::Conv2d conv1{torch::nn::Conv2dOptions(1, 8, 3).padding(1)};
  torch::nn::Conv2d conv2{torch::nn::Conv2dOptions(8, 16, 3).padding(1)};
  torch::nn::Linear fc{784, 10};
  CnnImpl() {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc", fc);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = torch::max_pool2d(torch::relu(conv1(x)), 2);
    h = torch::max_pool2d(torch::relu(conv2(h)), 2);
    return fc(h.flatten(1));
  }
};

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
