// Loss functions, each matching the PyTorch function of the same name (definition,
// defaults, reduction). They build IR like everything else, so they differentiate to any
// order and fuse into the training step.
#pragma once
#include <cstdint>

#include "minigrad/dsl/tensor.hpp"

namespace mg::nn {

enum class Reduction { mean, sum, none };

struct CrossEntropyOptions {
  Reduction reduction = Reduction::mean;
  double label_smoothing = 0.0;
  std::int64_t ignore_index = -100;
};
// logits [N, C], target i64 [N] class indices. Mean reduction divides by the number of
// targets that are not ignore_index (as PyTorch).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, CrossEntropyOptions opts = {},
                     Loc loc = Loc::current());
// log_probs [N, C] (e.g. from log_softmax), target i64 [N].
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::mean,
                std::int64_t ignore_index = -100, Loc loc = Loc::current());
// Probabilities in [0,1]; logs are clamped at -100 as PyTorch does.
Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, Reduction reduction = Reduction::mean,
                            Loc loc = Loc::current());
// Numerically stable: max(x,0) - x*y + log1p(exp(-|x|)).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::mean, Loc loc = Loc::current());
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                Loc loc = Loc::current());
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
               Loc loc = Loc::current());
// 0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, double delta = 1.0,
                  Reduction reduction = Reduction::mean, Loc loc = Loc::current());
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, double beta = 1.0,
                      Reduction reduction = Reduction::mean, Loc loc = Loc::current());
// 0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) [+ 0.5 log(2 pi) if full],
// as torch.nn.GaussianNLLLoss: the clamp passes var's gradient through (torch clamps under no_grad);
// var: input's shape, that shape without the last dim, or with last dim 1 (torch's rule).
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full = false,
                         double eps = 1e-6, Reduction reduction = Reduction::mean, Loc loc = Loc::current());

}  // namespace mg::nn
