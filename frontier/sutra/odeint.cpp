// odeint's front door: checks what the user passed (errors name the user's line), then
// picks the solve for the method and the gradient mode.
#include "minigrad/frontier/sutra/odeint.hpp"

#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra {

namespace {

void check(const Tensor& y0, const Tensor& ts, const Tensors& params, const Options& opt, const SourceLoc& at) {
  if (!y0.valid() || !ts.valid()) throw UserError("odeint: y0 or ts is an empty Tensor handle", at);
  if (y0.dtype() != f32 && y0.dtype() != f64)
    throw ShapeError("odeint: y0 is " + to_string(y0.type()) + "; expected f32 or f64", at);
  if (ts.rank() != 1 || ts.shape()[0] < 2 || ts.dtype() != y0.dtype())
    throw ShapeError("odeint: ts is " + to_string(ts.type()) + "; expected " + to_string(y0.dtype()) +
                         "[N] with N >= 2 increasing times (y0's dtype)",
                     at);
  for (const Tensor& p : params)
    if (!p.valid() || p.dtype() != y0.dtype())
      throw ShapeError("odeint: a parameter is " + (p.valid() ? to_string(p.type()) : std::string("empty")) +
                           "; expected y0's dtype " + to_string(y0.dtype()),
                       at);
  if (opt.max_steps < 1) throw UserError("odeint: max_steps must be >= 1", at);
  if (opt.steps_per_interval < 1) throw UserError("odeint: steps_per_interval must be >= 1", at);
  if (!(opt.rtol > 0) || !(opt.atol >= 0)) throw UserError("odeint: expected rtol > 0 and atol >= 0", at);
}

}  // namespace

Solution odeint(const VectorField& f, const Tensor& y0, const Tensor& ts, const Tensors& params, const Options& opt,
                Loc loc) {
  const SourceLoc at = SourceLoc::from(loc);
  check(y0, ts, params, opt, at);
  // f's result must be typed like y: checked at every trace (f may branch on nothing
  // else), naming the odeint line and what f returned.
  const VectorField checked = [&](const Tensor& t, const Tensor& y, const Tensors& p) {
    Tensor dy = f(t, y, p);
    if (!dy.valid() || dy.type() != y.type())
      throw ShapeError("odeint: f returns " + (dy.valid() ? to_string(dy.type()) : std::string("an empty handle")) +
                           " for a state of type " + to_string(y.type()) + "; expected the state's type",
                       at);
    return dy;
  };
  if (opt.grad == Grad::adjoint) return detail::odeint_adjoint(checked, y0, ts, params, opt, loc);
  const Tableau& tab = tableau(opt.method);
  const detail::Field field = [&](const Tensor& t, const Tensors& y) { return Tensors{checked(t, y[0], params)}; };
  const std::int64_t N = ts.shape()[0];
  Solution sol;
  if (tab.adaptive()) {
    detail::Adaptive a = detail::solve_adaptive(field, tab, slice(ts, 0, 0, 1).reshape({}),
                                                slice(ts, 0, N - 1, N).reshape({}), Tensors{y0}, &ts, false,
                                                opt.grad == Grad::backprop, opt, loc);
    sol.ys = a.ys;
    sol.nfe = a.nfe;
  } else {
    sol.ys = detail::solve_fixed(field, tab, ts, y0, opt, loc);
    sol.nfe = detail::scalar_like(y0, static_cast<double>((N - 1) * opt.steps_per_interval * tab.stages()));
  }
  return sol;
}

Solution odeint(const SimpleField& f, const Tensor& y0, const Tensor& ts, const Options& opt, Loc loc) {
  return odeint([&](const Tensor& t, const Tensor& y, const Tensors&) { return f(t, y); }, y0, ts, Tensors{}, opt, loc);
}

}  // namespace mg::frontier::sutra
