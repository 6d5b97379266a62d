// Examples 04 and 05 (the Fashion-MNIST MLP and CNN) as libtorch modules, for the benches'
// libtorch side only (torch_models.cpp, torch_per_sample.cpp): nothing outside bench/
// includes torch.
#pragma once
#include <torch/torch.h>

namespace mg::bench::torch_fashion {

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

}  // namespace mg::bench::torch_fashion
