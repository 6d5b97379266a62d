// PRAMANA: distributional tensors. A DistributionalTensor carries a mean and a variance per
// element; the elements are independent of each other (diagonal: no covariances; stated,
// not checked). propagate() pushes one through any DSL function in ONE pass: the moments
// transformation (passes/moments.hpp, the registry's `moments` column) rewrites the
// function's nodes into mean and variance nodes, each reporting its rule's kind.
#pragma once
#include <functional>
#include <vector>

#include <minigrad/dsl/moments.hpp>
#include <minigrad/dsl/tensor.hpp>

namespace mg::frontier::pramana {

struct DistributionalTensor {
  Tensor mean, var;  // same type; var >= 0
  const Shape& shape() const { return mean.shape(); }
  Tensor std(Loc loc = Loc::current()) const;
};

// x ~ N(mean, var) elementwise (checks the two agree in type, naming your line).
DistributionalTensor gaussian(const Tensor& mean, const Tensor& var, Loc loc = Loc::current());
// A deterministic value (variance 0).
DistributionalTensor certain(const Tensor& value, Loc loc = Loc::current());

using DistFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The distributions of f's outputs when its arguments are independent random values with
// the given moments: f is traced once (on the means), then its nodes are propagated. Random
// ops f builds (dropout) are noise sources. `report` (optional) receives each node's rule
// kind. Errors name the op without a rule and your line.
std::vector<DistributionalTensor> propagate(const DistFn& f, const std::vector<DistributionalTensor>& args,
                                            MomentsOf* report = nullptr, Loc loc = Loc::current());
DistributionalTensor propagate(const std::function<Tensor(const Tensor&)>& f, const DistributionalTensor& x,
                               MomentsOf* report = nullptr, Loc loc = Loc::current());

// Elementwise operations on independent distributional tensors (through propagate).
DistributionalTensor operator+(const DistributionalTensor& a, const DistributionalTensor& b);
DistributionalTensor operator*(const DistributionalTensor& a, const DistributionalTensor& b);
DistributionalTensor relu(const DistributionalTensor& x, Loc loc = Loc::current());

}  // namespace mg::frontier::pramana
