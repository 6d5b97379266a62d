// Fixed-step solves: each interval of ts split into equal steps, so the solution lands on
// every requested time without interpolation.
#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra::detail {

Tensor solve_fixed(const Field& f, const Tableau& tab, const Tensor& ts, const Tensor& y0, const Options& opt, Loc loc) {
  const std::int64_t N = ts.shape()[0];
  // A scan over the intervals whose body is a scan over the interval's steps: only the
  // solution at ts is stacked, never every step's (the adjoint's forward stays O(N)).
  auto [last, ys] = scan(
      [&](const Tensors& y, const Tensors& x) {
        const Tensors end = solve_fixed_interval(f, tab, x[0], x[1], y, opt.steps_per_interval, opt.checkpoint_every, loc);
        return std::pair{end, end};
      },
      Tensors{y0}, Tensors{slice(ts, 0, 0, N - 1), slice(ts, 0, 1, N)}, ScanOptions{}, loc);
  return concat({y0.unsqueeze(0), ys[0]}, 0);
}

Tensors solve_fixed_interval(const Field& f, const Tableau& tab, const Tensor& t0, const Tensor& t1, const Tensors& y0,
                             std::int64_t n, std::int64_t checkpoint_every, Loc loc) {
  const Tensor dt = (t1 - t0) / static_cast<double>(n);
  Tensors init{t0};
  init.insert(init.end(), y0.begin(), y0.end());
  auto [end, unused] = scan(
      [&](const Tensors& c, const Tensors&) {
        const Tensors y(c.begin() + 1, c.end());
        const Step st = rk_step(f, tab, c[0], dt, y, {});
        Tensors next{c[0] + dt};
        next.insert(next.end(), st.y.begin(), st.y.end());
        return std::pair{next, Tensors{}};
      },
      init, Tensors{}, ScanOptions{.length = n, .checkpoint_every = checkpoint_every}, loc);
  return Tensors(end.begin() + 1, end.end());
}

}  // namespace mg::frontier::sutra::detail
