// custom_vjp in the DSL: a function whose gradient is an author-supplied backward (a
// surrogate gradient, a reversible block that recomputes its inputs, an adjoint solve).
// `fwd` runs as ordinary nodes and names its residuals explicitly; `bwd` is traced once
// into the region of a `custom_vjp` node (ir/ops/custom_vjp.cpp) and is itself
// differentiable, so grad of grad works. Tensors of the graph used inside `bwd` besides
// its parameters are captured (as extra residuals). Tensors `fwd` reads besides xs get no
// gradient from `bwd`: grad with respect to one of them is a GradError (as in JAX).
//
//   auto spike = mg::custom_vjp(
//       [](const Tensors& x) { return std::pair{(x[0] > 0.0).cast(f64), Tensors{x[0]}}; },
//       [](const Tensors& r, const Tensors&, const Tensor& dy) {      // fast-sigmoid surrogate
//         return Tensors{dy / ((mg::abs(r[0]) * 10.0 + 1.0) * (mg::abs(r[0]) * 10.0 + 1.0))};
//       });
//   Tensor s = spike(v);
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "minigrad/dsl/control.hpp"

namespace mg {

// fwd(xs) -> (y, residuals); bwd(residuals, xs, dy) -> one dx per x, typed like it.
using CustomFwd = std::function<std::pair<Tensor, Tensors>(const Tensors& xs)>;
using CustomBwd = std::function<Tensors(const Tensors& residuals, const Tensors& xs, const Tensor& dy)>;

class CustomVjp {
 public:
  CustomVjp(CustomFwd fwd, CustomBwd bwd) : fwd_(std::move(fwd)), bwd_(std::move(bwd)) {}
  // Applies the function: builds fwd's nodes and one custom_vjp node; returns y.
  Tensor operator()(const Tensors& xs, Loc loc = Loc::current()) const;
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return (*this)(Tensors{x}, loc); }

 private:
  CustomFwd fwd_;
  CustomBwd bwd_;
};

inline CustomVjp custom_vjp(CustomFwd fwd, CustomBwd bwd) { return {std::move(fwd), std::move(bwd)}; }

}  // namespace mg
