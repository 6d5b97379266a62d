// The adaptive solve: FSAL Runge-Kutta steps under torchdiffeq's controller (accept when
// the error ratio is <= 1; h *= clamp(safety * ratio^(-1/order), accepted ? 1 : dfactor,
// ifactor)), dense output at ts from each accepted step. One loop node: a while_loop, or a
// scan of max_steps steps whose steps after the end are the identity (differentiable).
#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra::detail {

Adaptive solve_adaptive(const Field& f, const Tableau& tab, const Tensor& t0, const Tensor& t1, const Tensors& y0,
                        const Tensor* ts, bool clip, bool bounded, const Options& opt, Loc loc) {
  const std::size_t n = y0.size();
  auto s = [&](double v) { return scalar_like(t0, v); };
  const Tensors f0 = f(t0, y0);
  const Tensor h0 = initial_step(f, t0, y0, f0, tab.order - 1, opt.rtol, opt.atol);
  // Carries: t, h, nfe, the state, its derivative (FSAL), and the dense output.
  Tensors init{t0, h0, s(2)};
  init.insert(init.end(), y0.begin(), y0.end());
  init.insert(init.end(), f0.begin(), f0.end());
  if (ts) {
    Shape out = y0[0].shape();
    out.insert(out.begin(), ts->shape()[0]);
    init.push_back(broadcast_to(y0[0].unsqueeze(0), out));
  }
  auto step = [&](const Tensors& c) {
    const Tensor &t = c[0], &h = c[1];
    const Tensors y(c.begin() + 3, c.begin() + 3 + static_cast<std::ptrdiff_t>(n));
    const Tensors k(c.begin() + 3 + static_cast<std::ptrdiff_t>(n), c.begin() + 3 + 2 * static_cast<std::ptrdiff_t>(n));
    const Tensor he = clip ? Tensor(minimum(h, t1 - t)) : h;
    const Step st = rk_step(f, tab, t, he, y, k);
    const Tensor ratio = error_ratio(st.err, y, st.y, opt.rtol, opt.atol);
    const Tensor accept = ratio <= 1.0;
    const Tensor raw = exp(log(maximum(ratio, s(1e-10))) * (-1.0 / tab.order)) * opt.safety;
    const Tensor factor = minimum(maximum(raw, where(accept, s(1), s(opt.dfactor))), s(opt.ifactor));
    Tensors next{where(accept, t + he, t), he * factor, c[2] + static_cast<double>(tab.stages() - 1)};
    for (std::size_t i = 0; i < n; ++i) next.push_back(where(accept, st.y[i], y[i]));
    for (std::size_t i = 0; i < n; ++i) next.push_back(where(accept, st.k.back()[i], k[i]));  // FSAL
    if (ts) {
      std::vector<Tensor> k0;
      for (const Tensors& ki : st.k) k0.push_back(ki[0]);
      const Tensor in_step = accept & (*ts > t) & (*ts <= t + he);
      Shape column{ts->shape()[0]};
      for (int d = 0; d < y[0].rank(); ++d) column.push_back(1);
      next.push_back(where(in_step.reshape(column), interpolate(tab, *ts, t, he, y[0], k0), c.back()));
    }
    return next;
  };
  Tensors end;
  if (!bounded) {
    end = while_loop([&](const Tensors& c) { return c[0] < t1; }, step, init, opt.max_steps, loc);
  } else {
    auto [carry, unused] = scan(
        [&](const Tensors& c, const Tensors&) {
          const Tensor done = c[0] >= t1;
          Tensors next = step(c);
          for (std::size_t i = 0; i < next.size(); ++i) next[i] = where(done, c[i], next[i]);
          return std::pair{next, Tensors{}};
        },
        init, Tensors{}, ScanOptions{.length = opt.max_steps, .checkpoint_every = opt.checkpoint_every}, loc);
    end = carry;
    // Not at t1 after max_steps steps: the same run-time error as the while_loop's, naming
    // the user's line and max_steps (a loop that idles while the solve is unfinished, so
    // it runs out of its max_steps exactly then); the result is selected by its outcome so
    // the check is part of what is computed.
    const Tensor t_checked = while_loop([&](const Tensor& t) { return t < t1; }, [](const Tensor& t) { return t; },
                                        end[0], opt.max_steps, loc);
    const Tensor finished = t_checked >= t1;
    for (std::size_t i = 3; i < end.size(); ++i) end[i] = where(finished, end[i], zeros_like(end[i]));
  }
  Adaptive r;
  r.y.assign(end.begin() + 3, end.begin() + 3 + static_cast<std::ptrdiff_t>(n));
  if (ts) r.ys = end.back();
  r.nfe = end[2];
  return r;
}

}  // namespace mg::frontier::sutra::detail
