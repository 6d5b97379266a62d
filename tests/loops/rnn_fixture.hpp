// The tanh RNN the loop tests share: h_{t+1} = tanh(h_t W + x_t U + b) over inputs h0
// [B, H] and xs [T, B, D], as one scan and unrolled, with seeded feeds.
#pragma once
#include <utility>
#include <vector>

#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"

namespace mg::testing {

struct Rnn {
  static constexpr std::int64_t B = 2, D = 3;
  std::int64_t H;
  double weight_scale;  // W and U are drawn in [-scale, scale]: keeps tanh out of saturation
  Graph g;
  Tensor h0, xs, W, U, b;

  Rnn(std::int64_t T, std::int64_t hidden, double weight_scale) : H(hidden), weight_scale(weight_scale) {
    h0 = g.input("h0", f64, {B, H});
    xs = g.input("xs", f64, {T, B, D});
    W = g.input("W", f64, {H, H});
    U = g.input("U", f64, {D, H});
    b = g.input("b", f64, {H});
  }
  std::vector<Tensor> params() const { return {h0, xs, W, U, b}; }
  Tensor cell(const Tensor& h, const Tensor& x) const { return tanh(matmul(h, W) + matmul(x, U) + b); }

  // loss = sum(hs^2) / 2 + sum(h_T), through one scan.
  Tensor loss(ScanOptions opt = {}) const {
    auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
      Tensor h2 = cell(h, x);
      return std::pair{h2, h2};
    }, h0, xs, opt);
    return (hs * hs).sum() * 0.5 + hT.sum();
  }
  // The same loss as T copies of the cell.
  Tensor loss_unrolled() const {
    const std::int64_t T = xs.shape()[0];
    Tensor h = h0, l = h0.sum() * 0.0;
    for (std::int64_t t = 0; t < T; ++t) {
      h = cell(h, slice(xs, 0, t, t + 1).reshape({B, D}));
      l = l + (h * h).sum() * 0.5;
    }
    return l + h.sum();
  }
  // Only the final carry: what the backward must keep is the carries.
  Tensor final_loss(ScanOptions opt) const {
    auto [c, ys] = scan([&](const Tensors& h, const Tensors& x) { return std::pair{Tensors{cell(h[0], x[0])}, Tensors{}}; },
                        Tensors{h0}, Tensors{xs}, opt);
    return c[0].sum();
  }

  std::vector<Feed> feeds() const {
    auto s = [](const Tensor& t, std::uint64_t seed, double scale) {
      Array a = sample(t.type(), ir::Domain::any, seed);
      for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, a.at(i) * scale);
      return a;
    };
    return {{"h0", s(h0, 1, 1)}, {"xs", s(xs, 2, 1)}, {"W", s(W, 3, weight_scale)}, {"U", s(U, 4, weight_scale)},
            {"b", s(b, 5, 1)}};
  }
};

}  // namespace mg::testing
