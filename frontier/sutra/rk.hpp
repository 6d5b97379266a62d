// The solver's building blocks over a state of several tensors (y alone, or the adjoint's
// augmented [y, a, a_params...]); internal to sutra.
#pragma once
#include <functional>
#include <vector>

#include "minigrad/dsl/control.hpp"
#include "minigrad/frontier/sutra/odeint.hpp"

namespace mg::frontier::sutra::detail {

// dstate/dt at (t, state).
using Field = std::function<Tensors(const Tensor& t, const Tensors& state)>;

struct Step {
  Tensors y;               // the solution after the step
  Tensors err;             // its error estimate (adaptive tableaus)
  std::vector<Tensors> k;  // the stages
};

// One explicit RK step of size h from (t, y); k1 = f(t, y) when known (FSAL), else empty.
Step rk_step(const Field& f, const Tableau& tab, const Tensor& t, const Tensor& h, const Tensors& y, Tensors k1);

// max over the state's tensors of RMS(x / (atol + rtol * max(|y0|, |y1|))): torchdiffeq's
// mixed norm for tuples of tensors.
Tensor error_ratio(const Tensors& err, const Tensors& y0, const Tensors& y1, double rtol, double atol);

// Hairer's initial step (as torchdiffeq's _select_initial_step); f0 = f(t0, y0).
Tensor initial_step(const Field& f, const Tensor& t0, const Tensors& y0, const Tensors& f0, int order, double rtol,
                    double atol);

// The dense output between t and t + h at each of ts ([N]): [N, ...y.shape].
Tensor interpolate(const Tableau& tab, const Tensor& ts, const Tensor& t, const Tensor& h, const Tensor& y,
                   const std::vector<Tensor>& k);

// A scalar of x's dtype in x's graph.
Tensor scalar_like(const Tensor& x, double v);

// Adaptive solve of `f` from t0 to t1 (t1 > t0) over a state: the controller, FSAL and
// (with ts) dense output of state[0] at ts. `bounded`: a scan of max_steps steps whose
// steps past t1 are the identity (differentiable), else a while_loop (forward only).
// `clip`: the last step ends exactly at t1 (no dense output needed then).
struct Adaptive {
  Tensors y;    // the state where the solve stopped (at t1 when clipped)
  Tensor ys;    // with ts: [N, ...] dense output of state[0]
  Tensor nfe;   // f evaluations
};
Adaptive solve_adaptive(const Field& f, const Tableau& tab, const Tensor& t0, const Tensor& t1, const Tensors& y0,
                        const Tensor* ts, bool clip, bool bounded, const Options& opt, Loc loc);

// Fixed-step solve at ts ([N]) with opt.steps_per_interval steps per interval (a scan
// over the intervals around a scan over the steps). Returns [N, ...y0.shape].
Tensor solve_fixed(const Field& f, const Tableau& tab, const Tensor& ts, const Tensor& y0, const Options& opt, Loc loc);

// Fixed-step solve of a state over [t0, t1] with n equal steps (a scan, checkpointed every
// checkpoint_every steps when > 0); the final state.
Tensors solve_fixed_interval(const Field& f, const Tableau& tab, const Tensor& t0, const Tensor& t1, const Tensors& y0,
                             std::int64_t n, std::int64_t checkpoint_every, Loc loc);

// The adjoint method: ys from the forward solve wrapped in a custom_vjp.
Solution odeint_adjoint(const VectorField& f, const Tensor& y0, const Tensor& ts, const Tensors& params,
                        const Options& opt, Loc loc);

}  // namespace mg::frontier::sutra::detail
