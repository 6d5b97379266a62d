// DSL wrappers over the autodiff passes.
#include "minigrad/dsl/autodiff.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/hessian.hpp"

namespace mg {

namespace {
std::vector<ir::Value> values(const std::vector<Tensor>& ts, const char* what) {
  std::vector<ir::Value> vs;
  for (auto& t : ts) {
    if (!t.valid()) throw GradError(std::string(what) + ": an empty Tensor handle", ambient_loc());
    vs.push_back(t.value());
  }
  return vs;
}
std::vector<Tensor> tensors(const std::vector<ir::Value>& vs) { return {vs.begin(), vs.end()}; }
}  // namespace

std::vector<Tensor> detail::grad(const Tensor& y, const std::vector<Tensor>& wrt, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  auto w = values(wrt, "grad");
  return tensors(passes::grad(y.value(), w));
}

std::vector<Tensor> vjp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& cotangents,
                        const std::vector<Tensor>& wrt, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  auto o = values(outputs, "vjp"), c = values(cotangents, "vjp"), w = values(wrt, "vjp");
  return tensors(passes::vjp(o, c, w));
}

Tensor hessian(const Tensor& y, const Tensor& x, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  return Tensor(passes::hessian(y.value(), x.value()));
}

}  // namespace mg
