// Convolution and pooling: functional forms (as torch.nn.functional) and modules.
// NCHW layout; weights [out, in/groups, kh, kw] as PyTorch, default Kaiming-uniform init.
#pragma once
#include <array>

#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

using Pair = std::array<std::int64_t, 2>;

Tensor conv2d(const Tensor& x, const Tensor& w, Pair stride = {1, 1}, Pair padding = {0, 0},
              Pair dilation = {1, 1}, std::int64_t groups = 1, Loc loc = Loc::current());
// stride defaults to the kernel size (PyTorch); pass {0, 0} for that default.
Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0}, Loc loc = Loc::current());
Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0},
                  bool count_include_pad = true, Loc loc = Loc::current());

struct Conv2D {
  Parameter weight, bias;
  Pair stride, padding, dilation;
  std::int64_t groups = 1;
  bool has_bias = true;
  Conv2D(std::int64_t in, std::int64_t out, Pair kernel, Pair stride = {1, 1}, Pair padding = {0, 0},
         Pair dilation = {1, 1}, std::int64_t groups = 1, bool bias = true, DType dtype = default_float);
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) {
    f("weight", weight);
    if (has_bias) f("bias", bias);
  }
};

struct MaxPool2D {
  Pair kernel, stride = {0, 0}, padding = {0, 0};
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return max_pool2d(x, kernel, stride, padding, loc); }
  template <class F> void for_each_parameter(F&&) {}
};

struct AvgPool2D {
  Pair kernel, stride = {0, 0}, padding = {0, 0};
  bool count_include_pad = true;
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const {
    return avg_pool2d(x, kernel, stride, padding, count_include_pad, loc);
  }
  template <class F> void for_each_parameter(F&&) {}
};

}  // namespace mg::nn
