// Batch normalisation; see batchnorm.hpp.
#include "minigrad/dsl/nn/batchnorm.hpp"

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::nn {

BatchNorm::BatchNorm(std::int64_t c, int lo, int hi, double eps_, double momentum_, DType dtype)
    : weight({c}, dtype, constant_init(1.0)), bias({c}, dtype, constant_init(0.0)),
      running_mean({c}, dtype, constant_init(0.0), false), running_var({c}, dtype, constant_init(1.0), false),
      num_features(c), expected_rank_lo(lo), expected_rank_hi(hi), eps(eps_), momentum(momentum_) {}

Tensor BatchNorm::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  if (!weight.tensor.valid())
    throw UserError("BatchNorm: parameters are not bound to a graph; call nn::bind(model, graph) first", ambient_loc());
  if (x.rank() < expected_rank_lo || x.rank() > expected_rank_hi || x.shape()[1] != num_features)
    throw ShapeError("BatchNorm: expects [N, " + std::to_string(num_features) + ", ...] of rank " +
                         std::to_string(expected_rank_lo) +
                         (expected_rank_hi != expected_rank_lo ? "-" + std::to_string(expected_rank_hi) : "") +
                         ", got " + to_string(x.type()),
                     ambient_loc());
  Shape bshape(static_cast<std::size_t>(x.rank()), 1);
  bshape[1] = num_features;
  auto per_channel = [&](const Parameter& p) { return p.tensor.reshape(bshape, loc); };
  std::vector<std::int64_t> axes;
  for (int i = 0; i < x.rank(); ++i)
    if (i != 1) axes.push_back(i);
  Tensor mean, var;
  if (training) {
    const double n = static_cast<double>(x.numel() / num_features);
    mean = x.mean(axes, true, loc);
    var = square(x - mean).mean(axes, true, loc);  // biased: normalises the batch
    Tensor m = mean.reshape({num_features}, loc), v = var.reshape({num_features}, loc);
    running_mean.update = Tensor(running_mean.tensor * (1 - momentum) + m * momentum, loc);
    running_var.update = Tensor(running_var.tensor * (1 - momentum) + v * (momentum * n / std::max(n - 1, 1.0)), loc);
  } else {
    mean = per_channel(running_mean);
    var = per_channel(running_var);
  }
  return Tensor((x - mean) * rsqrt(var + eps) * per_channel(weight) + per_channel(bias), loc);
}

}  // namespace mg::nn
