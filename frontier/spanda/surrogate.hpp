// Spike generation with surrogate gradients, as snnTorch's `surrogate` module computes them:
// forward S = Heaviside(U - U_thr) with snnTorch's strict `(U - U_thr) > 0`; backward
// dS/dU replaced by a smooth stand-in. Built with mg::custom_vjp, so the stand-in is
// ordinary IR: grad of grad differentiates the surrogate's own formula (the step's true
// second derivative is zero, which would make every Hessian vanish).
#pragma once
#include <string>

#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::spanda {

// The surrogates of snnTorch (snntorch/surrogate.py), with its defaults. For x = U - U_thr:
//   atan(alpha=2):          dS/dx = alpha/2 / (1 + (pi/2 * alpha * x)^2)
//   fast_sigmoid(slope=25): dS/dx = 1 / (slope |x| + 1)^2
//   sigmoid(slope=25):      dS/dx = slope e^{-slope x} / (e^{-slope x} + 1)^2
//   triangular(threshold=1): dS/dx = threshold where x < 0, -threshold where x >= 0 (snnTorch's
//                           code, sign flip included)
//   straight_through:       dS/dx = 1
struct Surrogate {
  enum class Kind { atan, fast_sigmoid, sigmoid, triangular, straight_through };
  Kind kind = Kind::atan;
  double param = 2.0;  // alpha (atan), slope (fast_sigmoid, sigmoid), threshold (triangular)

  static Surrogate atan(double alpha = 2.0) { return {Kind::atan, alpha}; }
  static Surrogate fast_sigmoid(double slope = 25.0) { return {Kind::fast_sigmoid, slope}; }
  static Surrogate sigmoid(double slope = 25.0) { return {Kind::sigmoid, slope}; }
  static Surrogate triangular(double threshold = 1.0) { return {Kind::triangular, threshold}; }
  static Surrogate straight_through() { return {Kind::straight_through, 0.0}; }

  // The stand-in derivative dS/dx at x (elementwise IR, differentiable).
  Tensor derivative(const Tensor& x, Loc loc = Loc::current()) const;
  std::string name() const;
};

// S = (x > 0) in x's dtype, with gradient dy * surrogate.derivative(x).
Tensor spike(const Tensor& x, const Surrogate& surrogate = Surrogate::atan(), Loc loc = Loc::current());

}  // namespace mg::frontier::spanda
