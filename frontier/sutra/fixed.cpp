// Fixed-step solves: one scan over the step grid (each interval of ts split into equal
// steps), so the solution lands on every requested time without interpolation.
#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra::detail {

Tensor solve_fixed(const Field& f, const Tableau& tab, const Tensor& ts, const Tensor& y0, const Options& opt, Loc loc) {
  const std::int64_t N = ts.shape()[0], n = opt.steps_per_interval;
  const Tensor lo = slice(ts, 0, 0, N - 1), hi = slice(ts, 0, 1, N);
  const Tensor dt = ((hi - lo) / static_cast<double>(n)).reshape({N - 1, 1});
  const Tensor j = graph_of(ts).arange(0, static_cast<double>(n), 1, ts.dtype()).reshape({1, n});
  const Tensor grid = (lo.reshape({N - 1, 1}) + j * dt).reshape({-1});
  const Tensor steps = broadcast_to(dt, {N - 1, n}).reshape({-1});
  auto [last, ys] = scan(
      [&](const Tensors& y, const Tensors& x) {
        const Step st = rk_step(f, tab, x[0], x[1], y, {});
        return std::pair{st.y, st.y};
      },
      Tensors{y0}, Tensors{grid, steps}, ScanOptions{.checkpoint_every = opt.checkpoint_every}, loc);
  // ys: [(N-1) n, ...]: keep the last step of each interval.
  Shape per{N - 1, n};
  for (std::int64_t d : y0.shape()) per.push_back(d);
  Shape at = y0.shape();
  at.insert(at.begin(), N - 1);
  const Tensor ends = slice(ys[0].reshape(per), 1, n - 1, n).reshape(at);
  return concat({y0.unsqueeze(0), ends}, 0);
}

Tensors solve_fixed_interval(const Field& f, const Tableau& tab, const Tensor& t0, const Tensor& t1, const Tensors& y0,
                             std::int64_t n, Loc loc) {
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
      init, Tensors{}, ScanOptions{.length = n}, loc);
  return Tensors(end.begin() + 1, end.end());
}

}  // namespace mg::frontier::sutra::detail
