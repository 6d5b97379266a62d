// The surrogate formulas (snntorch/surrogate.py, backward methods) and the custom_vjp spike.
#include "minigrad/frontier/spanda/surrogate.hpp"

#include <numbers>

#include "minigrad/dsl/custom_vjp.hpp"
#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {

Tensor Surrogate::derivative(const Tensor& x, Loc loc) const {
  constexpr double pi = std::numbers::pi;
  switch (kind) {  // the surrogate's own formula, not per-op knowledge
    case Kind::atan: {
      Tensor z = Tensor(x * (pi / 2 * param), loc);
      return Tensor(param / 2 / (z * z + 1.0), loc);
    }
    case Kind::fast_sigmoid: {
      Tensor d(abs(x) * param + 1.0, loc);
      return Tensor(1.0 / (d * d), loc);
    }
    case Kind::sigmoid: {
      Tensor e(exp(x * -param), loc);
      return Tensor(e * param / ((e + 1.0) * (e + 1.0)), loc);
    }
    case Kind::triangular:
      return Tensor(where(x >= 0.0, full_like(x, -param, std::nullopt, loc), full_like(x, param, std::nullopt, loc)),
                    loc);
    case Kind::straight_through:
      return ones_like(x, std::nullopt, loc);
  }
  throw UserError("spanda::Surrogate: unknown kind", SourceLoc::from(loc));
}

std::string Surrogate::name() const {
  switch (kind) {
    case Kind::atan: return "atan";
    case Kind::fast_sigmoid: return "fast_sigmoid";
    case Kind::sigmoid: return "sigmoid";
    case Kind::triangular: return "triangular";
    case Kind::straight_through: return "straight_through";
  }
  return "?";
}

Tensor spike(const Tensor& x, const Surrogate& surrogate, Loc loc) {
  if (!is_float(x.dtype()))
    throw ShapeError("spanda::spike: expects a float membrane potential, got " + to_string(x.type()),
                     SourceLoc::from(loc));
  auto fn = custom_vjp(
      [loc](const Tensors& u) { return std::pair{Tensor(u[0] > 0.0, loc).cast(u[0].dtype(), loc), Tensors{u[0]}}; },
      [surrogate, loc](const Tensors& r, const Tensors&, const Tensor& dy) {
        return Tensors{Tensor(dy * surrogate.derivative(r[0], loc), loc)};
      });
  return fn(x, loc);
}

}  // namespace mg::frontier::spanda
