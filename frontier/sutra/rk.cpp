// One Runge-Kutta step, the error norm, the initial step and the dense output; see rk.hpp.
#include "minigrad/frontier/sutra/rk.hpp"

#include <minigrad/minigrad.hpp>

namespace mg::frontier::sutra::detail {

Tensor scalar_like(const Tensor& x, double v) { return graph_of(x).scalar(v, x.dtype()); }

namespace {

// y + h * sum_j w_j k_j over the state's tensors (zero weights skipped).
Tensors combine(const Tensors& y, const Tensor& h, const std::vector<double>& w, const std::vector<Tensors>& k) {
  Tensors out;
  for (std::size_t c = 0; c < y.size(); ++c) {
    Tensor acc;
    for (std::size_t j = 0; j < w.size() && j < k.size(); ++j) {
      if (w[j] == 0) continue;
      Tensor term = k[j][c] * w[j];
      acc = acc.valid() ? Tensor(acc + term) : term;
    }
    out.push_back(acc.valid() ? Tensor(y[c] + h * acc) : y[c]);
  }
  return out;
}

Tensor rms(const Tensor& x) {
  // Floored so that an exactly zero error (or a zero state) has a finite derivative.
  return sqrt(maximum(mean(x * x), scalar_like(x, 1e-30)));
}

}  // namespace

Step rk_step(const Field& f, const Tableau& tab, const Tensor& t, const Tensor& h, const Tensors& y, Tensors k1) {
  Step s;
  s.k.push_back(k1.empty() ? f(t, y) : std::move(k1));
  for (int i = 1; i < tab.stages(); ++i) {
    const Tensors yi = combine(y, h, tab.a[static_cast<std::size_t>(i)], s.k);
    s.k.push_back(f(t + h * tab.c[static_cast<std::size_t>(i)], yi));
  }
  s.y = combine(y, h, tab.b, s.k);
  if (tab.adaptive()) {
    Tensors zero;
    for (const Tensor& c : y) zero.push_back(zeros_like(c));
    s.err = combine(zero, h, tab.e, s.k);
  }
  return s;
}

Tensor error_ratio(const Tensors& err, const Tensors& y0, const Tensors& y1, double rtol, double atol) {
  Tensor worst;
  for (std::size_t c = 0; c < err.size(); ++c) {
    Tensor tol = maximum(abs(y0[c]), abs(y1[c])) * rtol + atol;
    Tensor r = rms(err[c] / tol);
    worst = worst.valid() ? Tensor(maximum(worst, r)) : r;
  }
  return worst;
}

Tensor initial_step(const Field& f, const Tensor& t0, const Tensors& y0, const Tensors& f0, int order, double rtol,
                    double atol) {
  auto norm = [&](const Tensors& x) {
    Tensor worst;
    for (std::size_t c = 0; c < x.size(); ++c) {
      Tensor r = rms(x[c] / (abs(y0[c]) * rtol + atol));
      worst = worst.valid() ? Tensor(maximum(worst, r)) : r;
    }
    return worst;
  };
  auto s = [&](double v) { return scalar_like(t0, v); };
  // Denominators are floored where the other branch of the `where` is taken, so that branch
  // has finite derivatives too.
  const Tensor d0 = norm(y0), d1 = norm(f0);
  const Tensor h0 = where((d0 < 1e-5) | (d1 < 1e-5), s(1e-6), d0 / maximum(d1, s(1e-5)) * 0.01);
  Tensors y1;
  for (std::size_t c = 0; c < y0.size(); ++c) y1.push_back(y0[c] + h0 * f0[c]);
  const Tensors f1 = f(t0 + h0, y1);
  Tensors df;
  for (std::size_t c = 0; c < y0.size(); ++c) df.push_back(f1[c] - f0[c]);
  const Tensor d2 = norm(df) / h0;
  const Tensor m = maximum(d1, d2);
  const Tensor h1 = where(m <= 1e-15, maximum(h0 * 1e-3, s(1e-6)),
                          exp(log(s(0.01) / maximum(m, s(1e-15))) * (1.0 / (order + 1))));
  return minimum(h0 * 100.0, h1);
}

Tensor interpolate(const Tableau& tab, const Tensor& ts, const Tensor& t, const Tensor& h, const Tensor& y,
                   const std::vector<Tensor>& k) {
  const Tensor theta = (ts - t) / h;  // [N]
  Shape column{ts.shape()[0]};
  for (int d = 0; d < y.rank(); ++d) column.push_back(1);
  Tensor acc;
  for (std::size_t i = 0; i < tab.interp.size(); ++i) {
    const std::vector<double>& p = tab.interp[i];
    bool zero = true;
    for (double v : p) zero = zero && v == 0;
    if (zero) continue;
    Tensor B = full_like(theta, p.back());
    for (std::size_t q = p.size() - 1; q-- > 0;) B = B * theta + p[q];  // Horner
    Tensor term = B.reshape(column) * k[i].unsqueeze(0);
    acc = acc.valid() ? Tensor(acc + term) : term;
  }
  return y.unsqueeze(0) + h * acc;
}

}  // namespace mg::frontier::sutra::detail
