// odeint: solutions of y' = f(t, y, params) at the times ts, as graph values (torchdiffeq's
// odeint / odeint_adjoint). A solve is a loop NODE whatever its step count: fixed-step
// methods are one `scan` over the step grid; adaptive ones (dopri5, tsit5) a `while_loop`
// bounded by max_steps, or, to backpropagate through them, a `scan` of max_steps steps
// whose steps past the end are the identity (Diffrax's answer). Gradients three ways
// (Options::grad); see the README section "SUTRA".
//
//   auto sol = sutra::odeint([](const Tensor& t, const Tensor& y, const Tensors& p) {
//     return matmul(y * y * y, p[0]);
//   }, y0, ts, {A}, {.method = sutra::Method::dopri5, .grad = sutra::Grad::adjoint});
//   Tensor ys = sol.ys;                                    // [ts.size, ...y0.shape]
#pragma once
#include <cstdint>
#include <functional>

#include "minigrad/dsl/control.hpp"
#include "minigrad/frontier/sutra/tableau.hpp"

namespace mg::frontier::sutra {

enum class Grad {
  backprop,  // through the solver's own loop (exact gradient of the discretisation)
  adjoint,   // custom_vjp: the augmented adjoint ODE solved backward in time
  none,      // forward only (adaptive: a while_loop; grad through it is a GradError)
};

struct Options {
  Method method = Method::dopri5;
  double rtol = 1e-7, atol = 1e-9;     // torchdiffeq's defaults
  Grad grad = Grad::backprop;
  std::int64_t max_steps = 1000;       // adaptive: step attempts (accepted or not) per solve
  std::int64_t steps_per_interval = 1; // fixed-step: equal steps between consecutive ts
  // Backprop: scan rematerialisation, every k-th step's values kept (k divides the fixed-step
  // steps_per_interval, or the adaptive max_steps); 0: all kept.
  std::int64_t checkpoint_every = 0;
  double safety = 0.9, ifactor = 10, dfactor = 0.2;  // the step-size controller
};

// f(t, y, params) -> dy/dt, typed like y; t is a scalar of y's dtype. Every tensor f's
// result depends on and that needs a gradient must come in through params: the adjoint
// differentiates f with respect to params only (differentiating a tensor f captures is a
// GradError there, naming the odeint call).
using VectorField = std::function<Tensor(const Tensor& t, const Tensor& y, const Tensors& params)>;
using SimpleField = std::function<Tensor(const Tensor& t, const Tensor& y)>;

struct Solution {
  Tensor ys;   // [N, ...y0.shape]: y at each of the N times in ts
  Tensor nfe;  // scalar (y's dtype): evaluations of f in the forward solve (run time)
  // Adjoint only: a scalar zero input of the solve whose "gradient" the backward sets to
  // its own number of f evaluations, so grad(loss, {nfe_probe}) reads the backward NFE.
  Tensor nfe_probe;
};

// ts: [N] increasing, y0's dtype (f32 or f64); params: graph tensors of that dtype.
Solution odeint(const VectorField& f, const Tensor& y0, const Tensor& ts, const Tensors& params = {},
                const Options& opt = {}, Loc loc = Loc::current());
// f(t, y) without parameters (a closure; not for Grad::adjoint of a closure over weights).
Solution odeint(const SimpleField& f, const Tensor& y0, const Tensor& ts, const Options& opt = {},
                Loc loc = Loc::current());

}  // namespace mg::frontier::sutra
