// Typed builder functions for the nn family (ir/ops/nn.cpp, nn_pool.cpp): conv and pooling in NCHW.
// They only fill attributes; the ops' infer rules validate everything. The *_grad and
// *_select ops are what the VJPs are made of (so grad of grad works); a model only needs
// conv2d, max_pool2d and avg_pool2d. Bias is not part of conv2d (add it with broadcasting).
#pragma once
#include "minigrad/ir/ops.hpp"

namespace mg::ir {

struct Conv2dParams {
  I64List stride{1, 1};
  I64List padding{0, 0};
  I64List dilation{1, 1};
  std::int64_t groups = 1;
};
// x[N,C,H,W], w[O,C/groups,kh,kw] -> [N,O,Ho,Wo] (PyTorch's conv2d without bias).
Value conv2d(Value x, Value w, const Conv2dParams& p = {});
// The adjoints of conv2d in x and in w; input_size / kernel_size = [H, W] / [kh, kw].
Value conv2d_input_grad(Value g, Value w, const Conv2dParams& p, I64List input_size);
Value conv2d_weight_grad(Value x, Value g, const Conv2dParams& p, I64List kernel_size);

// PyTorch's max_pool2d / avg_pool2d arguments (stride always explicit here).
struct MaxPool2dParams {
  I64List kernel_size;
  I64List stride;
  I64List padding{0, 0};
  I64List dilation{1, 1};
  bool ceil_mode = false;
};
struct AvgPool2dParams {
  I64List kernel_size;
  I64List stride;
  I64List padding{0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::int64_t divisor_override = 0;  // 0: none (PyTorch's None)
};
Value max_pool2d(Value x, const MaxPool2dParams& p);
Value max_pool2d_grad(Value x, Value g, const MaxPool2dParams& p);
Value max_pool2d_select(Value x, Value d, const MaxPool2dParams& p);
Value avg_pool2d(Value x, const AvgPool2dParams& p);
// The adjoint of avg_pool2d; input_size = [H, W] (ceil_mode maps several to one output size).
Value avg_pool2d_grad(Value g, const AvgPool2dParams& p, I64List input_size);

}  // namespace mg::ir
