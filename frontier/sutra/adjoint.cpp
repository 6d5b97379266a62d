// The adjoint method (torchdiffeq's odeint_adjoint) as a custom_vjp: the forward is a
// forward-only solve keeping only ys; the backward walks the intervals of ts from the last
// (a reverse scan), solving on each the augmented ODE [y, a, a_params] backward in time from
// the forward's y there, with a' = -a^T df/dy and a_params' = -a^T df/dparams from the VJP
// of f (mg::vjp on f traced in the loop body), and adds dL/dy(t_i) to a at each t_i. Its
// memory is that of one interval's solve: constant in the number of steps.
#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra::detail {

Solution odeint_adjoint(const VectorField& f, const Tensor& y0, const Tensor& ts, const Tensors& params,
                        const Options& opt, Loc loc) {
  const Tableau& tab = tableau(opt.method);
  const std::size_t P = params.size();
  const std::int64_t N = ts.shape()[0];
  Solution sol;
  sol.nfe_probe = graph_of(y0).scalar(0.0, y0.dtype());
  Tensors xs{y0};
  xs.insert(xs.end(), params.begin(), params.end());
  xs.push_back(sol.nfe_probe);

  auto forward = [&](const Tensors& x) {
    const Tensors p(x.begin() + 1, x.begin() + 1 + static_cast<std::ptrdiff_t>(P));
    const Field field = [&](const Tensor& t, const Tensors& y) { return Tensors{f(t, y[0], p)}; };
    if (tab.adaptive()) {
      Adaptive a = solve_adaptive(field, tab, slice(ts, 0, 0, 1).reshape({}), slice(ts, 0, N - 1, N).reshape({}),
                                  Tensors{x[0]}, &ts, false, false, opt, loc);
      sol.nfe = a.nfe;
      return std::pair{a.ys, Tensors{a.ys}};
    }
    sol.nfe = scalar_like(y0, static_cast<double>((N - 1) * opt.steps_per_interval * tab.stages()));
    Tensor ys = solve_fixed(field, tab, ts, x[0], opt, loc);
    return std::pair{ys, Tensors{ys}};
  };

  auto backward = [&](const Tensors& r, const Tensors& x, const Tensor& dy) {
    const Tensor& ys = r[0];
    const Tensors p(x.begin() + 1, x.begin() + 1 + static_cast<std::ptrdiff_t>(P));
    // The augmented state in reversed time s = -t: [y, a, a_p..., p...] (p rides along
    // unchanged so that f's VJP with respect to it is taken inside the loop body).
    const Field aug = [&](const Tensor& s, const Tensors& st) {
      const Tensor& y = st[0];
      const Tensor& a = st[1];
      const Tensors pl(st.begin() + 2 + static_cast<std::ptrdiff_t>(P), st.end());
      const Tensor fy = f(-s, y, pl);
      Tensors wrt{y};
      wrt.insert(wrt.end(), pl.begin(), pl.end());
      const Tensors v = vjp({fy}, {a}, wrt, loc);
      Tensors d{-fy};
      d.insert(d.end(), v.begin(), v.end());
      for (const Tensor& q : pl) d.push_back(zeros_like(q));
      return d;
    };
    auto at = [&](const Tensor& v, std::int64_t i) { return slice(v, 0, i, i + 1).reshape(y0.shape()); };
    Tensors init{at(dy, N - 1)};
    for (const Tensor& q : p) init.push_back(zeros_like(q));
    init.push_back(scalar_like(y0, 0));
    // p rides as unchanged carries too: values of the loop body, so f's VJP with respect
    // to them can be taken there (also before the inner loop, for its initial step).
    init.insert(init.end(), p.begin(), p.end());
    const Tensors over{slice(ts, 0, 0, N - 1), slice(ts, 0, 1, N), slice(ys, 0, 1, N), slice(dy, 0, 0, N - 1)};
    auto [end, unused] = scan(
        [&](const Tensors& c, const Tensors& iv) {
          Tensors state{iv[2], c[0]};
          state.insert(state.end(), c.begin() + 1, c.begin() + 1 + static_cast<std::ptrdiff_t>(P));
          const Tensors pl(c.begin() + 2 + static_cast<std::ptrdiff_t>(P), c.end());
          state.insert(state.end(), pl.begin(), pl.end());
          Tensors out;
          Tensor nfe;
          if (tab.adaptive()) {
            Adaptive a = solve_adaptive(aug, tab, -iv[1], -iv[0], state, nullptr, true, false, opt, loc);
            out = a.y;
            nfe = a.nfe;
          } else {
            out = solve_fixed_interval(aug, tab, -iv[1], -iv[0], state, opt.steps_per_interval, 0, loc);
            nfe = scalar_like(iv[0], static_cast<double>(opt.steps_per_interval * tab.stages()));
          }
          Tensors next{out[1] + iv[3]};
          next.insert(next.end(), out.begin() + 2, out.begin() + 2 + static_cast<std::ptrdiff_t>(P));
          next.push_back(c[1 + P] + nfe);
          next.insert(next.end(), pl.begin(), pl.end());
          return std::pair{next, Tensors{}};
        },
        init, over, ScanOptions{.reverse = true}, loc);
    end.resize(P + 2);  // dy0, dparams..., and the backward NFE for the probe
    return end;
  };
  sol.ys = custom_vjp(forward, backward)(xs, loc);
  return sol;
}

}  // namespace mg::frontier::sutra::detail
