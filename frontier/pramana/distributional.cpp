// DistributionalTensor and propagate(): a thin layer over the DSL's propagate_moments.
#include "minigrad/frontier/pramana/distributional.hpp"

#include <minigrad/dsl/expr.hpp>
#include <minigrad/dsl/tensor_methods.hpp>
#include <minigrad/ir/errors.hpp>

namespace mg::frontier::pramana {

Tensor DistributionalTensor::std(Loc loc) const { return Tensor(sqrt(var), loc); }

DistributionalTensor gaussian(const Tensor& mean, const Tensor& var, Loc loc) {
  if (!mean.valid() || !var.valid() || mean.type() != var.type() || &mean.graph() != &var.graph())
    throw ShapeError("pramana::gaussian: mean and variance must be values of one graph with one type, got " +
                         (mean.valid() ? to_string(mean.type()) : std::string("an empty handle")) + " and " +
                         (var.valid() ? to_string(var.type()) : std::string("an empty handle")),
                     SourceLoc::from(loc));
  return {mean, var};
}

DistributionalTensor certain(const Tensor& value, Loc loc) { return {value, Tensor(value * 0.0, loc)}; }

std::vector<DistributionalTensor> propagate(const DistFn& f, const std::vector<DistributionalTensor>& args,
                                            MomentsOf* report, Loc loc) {
  std::vector<Tensor> means, vars;
  for (const auto& a : args) {
    gaussian(a.mean, a.var, loc);  // checks
    means.push_back(a.mean);
    vars.push_back(a.var);
  }
  // Traced on the means: the trace's deterministic parts (weights, W^T) are shared with the
  // propagated graph; everything downstream of an argument is replaced by moment nodes.
  const std::vector<Tensor> outs = f(means);
  MomentsOf m = propagate_moments(outs, means, means, vars, loc);
  std::vector<DistributionalTensor> r;
  for (std::size_t k = 0; k < outs.size(); ++k) r.push_back({m.mean[k], m.var[k]});
  if (report) *report = std::move(m);
  return r;
}

DistributionalTensor propagate(const std::function<Tensor(const Tensor&)>& f, const DistributionalTensor& x,
                               MomentsOf* report, Loc loc) {
  return propagate([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{f(a[0])}; }, {x}, report, loc)[0];
}

DistributionalTensor operator+(const DistributionalTensor& a, const DistributionalTensor& b) {
  return propagate([](const std::vector<Tensor>& x) { return std::vector<Tensor>{Tensor(x[0] + x[1])}; }, {a, b})[0];
}
DistributionalTensor operator*(const DistributionalTensor& a, const DistributionalTensor& b) {
  return propagate([](const std::vector<Tensor>& x) { return std::vector<Tensor>{Tensor(x[0] * x[1])}; }, {a, b})[0];
}
DistributionalTensor relu(const DistributionalTensor& x, Loc loc) {
  return propagate([loc](const Tensor& t) { return Tensor(mg::relu(t), loc); }, x, nullptr, loc);
}

}  // namespace mg::frontier::pramana
