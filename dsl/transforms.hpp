// Function transformations in the DSL: forward mode (jvp), batching (vmap), Jacobians.
// Thin wrappers over passes/jvp.hpp, passes/vmap.hpp and passes/jacobian.hpp that speak
// Tensors and stamp the caller's line; they compose with grad in any order.
//
//   auto [jv] = jvp({y}, {x}, {v});                        // J v, one forward pass
//   auto per_example = vmap([&](const std::vector<Tensor>& a) {
//     return grad(loss(model, a[0], a[1]), params);        // per-sample gradients
//   }, {0, 0});
//   std::vector<Tensor> g = per_example({X, Y});           // each [B, ...param shape]
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg {

// Where an argument's (or a result's) batch axis is; `none`: not batched.
using BatchAxis = std::optional<int>;
inline constexpr std::nullopt_t none = std::nullopt;

// d(outputs)/d(wrt) · tangents (forward mode), one tangent per output.
std::vector<Tensor> jvp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& wrt,
                        const std::vector<Tensor>& tangents, Loc loc = Loc::current());

// The Jacobian dy/dx shaped y.shape ++ x.shape: by batched VJPs (jacrev: cheap when y is
// small) or batched JVPs (jacfwd: cheap when x is small).
Tensor jacrev(const Tensor& y, const Tensor& x, Loc loc = Loc::current());
Tensor jacfwd(const Tensor& y, const Tensor& x, Loc loc = Loc::current());

// vmap over values already built: `outputs` computed from per-example `args`; returns them
// computed from `batched` (batch axis at in_axes[k]; none: used as is). One in_axes or
// out_axes entry applies to every argument or output.
std::vector<Tensor> vmap(const std::vector<Tensor>& outputs, const std::vector<Tensor>& args,
                         const std::vector<Tensor>& batched, std::vector<BatchAxis> in_axes = {0},
                         std::vector<BatchAxis> out_axes = {0}, Loc loc = Loc::current());

using TensorsFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// A function mapped over a batch: calling it traces the function once on per-example
// stand-ins and batches what it built (no loop over the batch, ever).
class Vmapped {
 public:
  Vmapped(TensorsFn f, std::vector<BatchAxis> in_axes, std::vector<BatchAxis> out_axes)
      : f_(std::move(f)), in_axes_(std::move(in_axes)), out_axes_(std::move(out_axes)) {}
  std::vector<Tensor> operator()(const std::vector<Tensor>& args, Loc loc = Loc::current()) const;
  // One argument, one result.
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;

 private:
  TensorsFn f_;
  std::vector<BatchAxis> in_axes_, out_axes_;
};

Vmapped vmap(TensorsFn f, std::vector<BatchAxis> in_axes = {0}, std::vector<BatchAxis> out_axes = {0});
Vmapped vmap(std::function<Tensor(const Tensor&)> f, BatchAxis in_axis = 0, BatchAxis out_axis = 0);
// vmap of vmap: the inner function batched again (nested batch axes).
Vmapped vmap(const Vmapped& f, std::vector<BatchAxis> in_axes = {0}, std::vector<BatchAxis> out_axes = {0});

}  // namespace mg
