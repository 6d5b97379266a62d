// PRAMANA's layers: the distributional path of a Linear runs through the moments pass
// (matmul's rule: var' = var (W o W)^T), so it reports its kinds like any function.
#include "minigrad/frontier/pramana/layers.hpp"

#include <minigrad/dsl/expr.hpp>
#include <minigrad/dsl/tensor_methods.hpp>

namespace mg::frontier::pramana {

DistributionalTensor DistributionalLinear::operator()(const DistributionalTensor& x, Loc loc) const {
  return propagate([&](const Tensor& t) { return linear(t, loc); }, x, nullptr, loc);
}

DistributionalTensor GaussianHead::operator()(const Tensor& h, Loc loc) const {
  return {mean(h, loc), Tensor(softplus(raw_var(h, loc)) + min_var, loc)};
}

}  // namespace mg::frontier::pramana
