// Autodiff in the DSL: thin wrappers over passes::grad / passes::vjp / passes::hessian
// that speak Tensors and stamp the caller's line. `auto [dw, db] = grad(loss, {w, b});`
#pragma once
#include <array>
#include <concepts>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg {

namespace detail {
std::vector<Tensor> grad(const Tensor& y, const std::vector<Tensor>& wrt, Loc loc);
}

// d(y)/d(each of wrt), for a float scalar y. `wrt` may name any value y depends on:
// inputs, parameters, intermediate Tensors or expressions (an expression is one node).
// A vector of handles gives a vector (a template, so a braced list picks the form below).
template <class V>
  requires std::same_as<V, std::vector<Tensor>>
std::vector<Tensor> grad(const Tensor& y, const V& wrt, Loc loc = Loc::current()) {
  return detail::grad(y, wrt, loc);
}
// Fixed-size form for structured bindings: grad(y, {w, b}) -> std::array<Tensor, 2>.
template <std::size_t N>
std::array<Tensor, N> grad(const Tensor& y, const Tensor (&wrt)[N], Loc loc = Loc::current()) {
  auto v = detail::grad(y, std::vector<Tensor>(wrt, wrt + N), loc);
  std::array<Tensor, N> out;
  for (std::size_t i = 0; i < N; ++i) out[i] = v[i];
  return out;
}

// Vector-Jacobian product for non-scalar outputs: cotangent · d(outputs)/d(wrt).
std::vector<Tensor> vjp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& cotangents,
                        const std::vector<Tensor>& wrt, Loc loc = Loc::current());

// Full Hessian of scalar y w.r.t. x (shape x.shape ++ x.shape): jacfwd of grad, one
// forward-over-reverse pass batched over the columns (passes/jacobian.hpp).
Tensor hessian(const Tensor& y, const Tensor& x, Loc loc = Loc::current());

}  // namespace mg
