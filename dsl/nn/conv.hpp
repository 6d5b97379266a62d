// Convolution and pooling: functional forms (as torch.nn.functional) and modules.
// NCHW layout; weights [out, in/groups, kh, kw] as PyTorch, default Kaiming-uniform init.
#pragma once
#include <array>
#include <optional>

#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

using Pair = std::array<std::int64_t, 2>;

Tensor conv2d(const Tensor& x, const Tensor& w, Pair stride = {1, 1}, Pair padding = {0, 0},
              Pair dilation = {1, 1}, std::int64_t groups = 1, Loc loc = Loc::current());
// Pooling options, named and defaulted as PyTorch's (designated initializers:
// `nn::max_pool2d(x, {.kernel_size = {3, 3}, .stride = {2, 2}, .ceil_mode = true})`).
// stride {0, 0} means PyTorch's default, the kernel size.
struct MaxPool2dOptions {
  Pair kernel_size;
  Pair stride = {0, 0};
  Pair padding = {0, 0};  // at most half the kernel; counts as -inf
  Pair dilation = {1, 1};
  bool ceil_mode = false;  // round the output size up (a last window starts inside the input or left padding)
};
struct AvgPool2dOptions {
  Pair kernel_size;
  Pair stride = {0, 0};
  Pair padding = {0, 0};  // at most half the kernel; zeros
  bool ceil_mode = false;
  bool count_include_pad = true;  // divide by the window clipped to the padded input, not to the input
  std::optional<std::int64_t> divisor_override;  // divide every window by this (not 0)
};
Tensor max_pool2d(const Tensor& x, const MaxPool2dOptions& options, Loc loc = Loc::current());
Tensor avg_pool2d(const Tensor& x, const AvgPool2dOptions& options, Loc loc = Loc::current());

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

// The pooling layers are their options (`nn::MaxPool2D pool{{.kernel_size = {2, 2}}}`).
struct MaxPool2D : MaxPool2dOptions {
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return max_pool2d(x, *this, loc); }
  template <class F> void for_each_parameter(F&&) {}
};

struct AvgPool2D : AvgPool2dOptions {
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return avg_pool2d(x, *this, loc); }
  template <class F> void for_each_parameter(F&&) {}
};

}  // namespace mg::nn
