// Convolution and pooling in the DSL; the ops and their VJPs live in ir/ops/nn.cpp and nn_pool.cpp.
#include "minigrad/dsl/nn/conv.hpp"

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/nn.hpp"

namespace mg::nn {

namespace {
I64List list(Pair p) { return {p[0], p[1]}; }
Pair or_kernel(Pair stride, Pair kernel) { return stride == Pair{0, 0} ? kernel : stride; }
void check4(const char* op, const Tensor& x) {
  if (!x.valid() || x.rank() != 4)
    throw ShapeError(std::string(op) + ": expects an NCHW input of rank 4, got " +
                         (x.valid() ? to_string(x.type()) : std::string("an empty handle")),
                     ambient_loc());
}
}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, Pair stride, Pair padding, Pair dilation, std::int64_t groups, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check4("conv2d", x);
  return Tensor(ir::conv2d(x.value(), w.value(), {list(stride), list(padding), list(dilation), groups}));
}

Tensor max_pool2d(const Tensor& x, const MaxPool2dOptions& o, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check4("max_pool2d", x);
  return Tensor(ir::max_pool2d(x.value(), {.kernel_size = list(o.kernel_size),
                                           .stride = list(or_kernel(o.stride, o.kernel_size)),
                                           .padding = list(o.padding),
                                           .dilation = list(o.dilation),
                                           .ceil_mode = o.ceil_mode}));
}

Tensor avg_pool2d(const Tensor& x, const AvgPool2dOptions& o, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check4("avg_pool2d", x);
  if (o.divisor_override && *o.divisor_override == 0)
    throw UserError("avg_pool2d: expects divisor_override not 0 (leave it unset for the default divisor)",
                    ambient_loc());
  return Tensor(ir::avg_pool2d(x.value(), {.kernel_size = list(o.kernel_size),
                                           .stride = list(or_kernel(o.stride, o.kernel_size)),
                                           .padding = list(o.padding),
                                           .ceil_mode = o.ceil_mode,
                                           .count_include_pad = o.count_include_pad,
                                           .divisor_override = o.divisor_override.value_or(0)}));
}

Conv2D::Conv2D(std::int64_t in, std::int64_t out, Pair kernel, Pair stride_, Pair padding_, Pair dilation_,
               std::int64_t groups_, bool bias_, DType dtype)
    : weight({out, in / groups_, kernel[0], kernel[1]}, dtype, fan_in_uniform_init(in / groups_ * kernel[0] * kernel[1])),
      bias({out}, dtype, fan_in_uniform_init(in / groups_ * kernel[0] * kernel[1])),
      stride(stride_), padding(padding_), dilation(dilation_), groups(groups_), has_bias(bias_) {
  if (groups_ < 1 || in % groups_ != 0 || out % groups_ != 0)
    throw UserError("Conv2D: in (" + std::to_string(in) + ") and out (" + std::to_string(out) +
                    ") channels must be divisible by groups (" + std::to_string(groups_) + ")");
}

Tensor Conv2D::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  if (!weight.tensor.valid())
    throw UserError("Conv2D: parameters are not bound to a graph; call nn::bind(model, graph) first", ambient_loc());
  Tensor y = conv2d(x, weight.tensor, stride, padding, dilation, groups, loc);
  if (has_bias) y = Tensor(y + bias.tensor.reshape({1, bias.shape[0], 1, 1}, loc), loc);
  return y;
}

}  // namespace mg::nn
