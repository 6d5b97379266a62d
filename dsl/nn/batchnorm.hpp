// Batch normalisation over the channel axis 1 ([N, C] or [N, C, L] for BatchNorm1D,
// [N, C, H, W] for BatchNorm2D), as torch.nn.BatchNorm*d: in training the batch statistics
// normalise (biased variance) and the running statistics are buffers updated as
// (1 - momentum) * running + momentum * batch (unbiased variance), stored by the training
// step; in eval (`training = false`) the running statistics normalise.
#pragma once
#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

struct BatchNorm {
  Parameter weight, bias, running_mean, running_var;
  std::int64_t num_features;
  int expected_rank_lo, expected_rank_hi;
  double eps = 1e-5, momentum = 0.1;
  bool training = true;

  BatchNorm(std::int64_t num_features, int rank_lo, int rank_hi, double eps, double momentum, DType dtype);
  // Builds the forward pass; in training mode also sets the running statistics' updates.
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) {
    f("weight", weight);
    f("bias", bias);
    f("running_mean", running_mean);
    f("running_var", running_var);
  }
};

struct BatchNorm1D : BatchNorm {
  explicit BatchNorm1D(std::int64_t c, double eps = 1e-5, double momentum = 0.1, DType dtype = default_float)
      : BatchNorm(c, 2, 3, eps, momentum, dtype) {}
};
struct BatchNorm2D : BatchNorm {
  explicit BatchNorm2D(std::int64_t c, double eps = 1e-5, double momentum = 0.1, DType dtype = default_float)
      : BatchNorm(c, 4, 4, eps, momentum, dtype) {}
};

}  // namespace mg::nn
