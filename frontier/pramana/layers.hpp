// PRAMANA layers and losses: DistributionalLinear (mu' = mu W^T + b, var' = var (W o W)^T),
// GaussianNLLLoss (torch.nn.GaussianNLLLoss's definition) and a heteroscedastic Gaussian
// head (a mean and a variance per output, trained with the NLL).
#pragma once
#include <string>

#include <minigrad/dsl/nn/layers.hpp>
#include <minigrad/dsl/nn/loss.hpp>

#include "minigrad/frontier/pramana/distributional.hpp"

namespace mg::frontier::pramana {

// An nn::Linear that also maps distributions (its parameters are the Linear's).
struct DistributionalLinear {
  nn::Linear linear;
  DistributionalLinear(std::int64_t in, std::int64_t out, bool bias = true, DType dtype = default_float)
      : linear(in, out, bias, dtype) {}
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return linear(x, loc); }
  DistributionalTensor operator()(const DistributionalTensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) { linear.for_each_parameter(f); }
};

// 0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) [+ 0.5 log(2 pi)], reduced;
// var's gradient passes the clamp (PyTorch clamps under no_grad).
struct GaussianNLLLoss {
  bool full = false;
  double eps = 1e-6;
  nn::Reduction reduction = nn::Reduction::mean;
  Tensor operator()(const Tensor& input, const Tensor& target, const Tensor& var, Loc loc = Loc::current()) const {
    return nn::gaussian_nll_loss(input, target, var, full, eps, reduction, loc);
  }
};

// Heteroscedastic regression head: from features h, a mean and a variance per output,
// var = softplus(raw) + min_var (positive, smooth, never below min_var).
struct GaussianHead {
  nn::Linear mean, raw_var;
  double min_var = 1e-4;
  GaussianHead(std::int64_t in, std::int64_t out, DType dtype = default_float)
      : mean(in, out, true, dtype), raw_var(in, out, true, dtype) {}
  // {mean, var}
  DistributionalTensor operator()(const Tensor& h, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) {
    mean.for_each_parameter([&](const std::string& n, nn::Parameter& p) { f("mean." + n, p); });
    raw_var.for_each_parameter([&](const std::string& n, nn::Parameter& p) { f("raw_var." + n, p); });
  }
};

}  // namespace mg::frontier::pramana
