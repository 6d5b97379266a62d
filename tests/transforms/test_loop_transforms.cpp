// jvp and vmap through loops (issues 14 + 15 joined): a tanh RNN written with scan gives
// the same JVP as its unrolled graph (f64, 1e-12) on the interpreter, the C99 backend and
// after the pass pipeline; vmap of a function holding a scan equals the function stacked
// over the batch for every batching pattern; per-sample gradients through the scan
// (vmap(grad)) equal the loop of single-example gradients. while_loop: its JVP matches
// central differences, and vmap with a different trip count per example equals the loop
// run on each example (the batch runs while any example's condition holds).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/ops/gradcheck.hpp"
#include "tests/transforms/run_everywhere.hpp"

namespace mg {
namespace {

constexpr std::int64_t T = 5, H = 3, D = 2, Bt = 3;

Array sample(const Type& t, std::uint64_t seed, double scale = 1.0) {
  Array a = testing::sample(t, ir::Domain::any, seed);
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, a.at(i) * scale);
  return a;
}

// Example e of `a` batched along `axis`.
Array take(const Array& a, int axis, std::int64_t e) {
  Shape s = a.type().shape;
  const std::int64_t n = s[static_cast<std::size_t>(axis)];
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  s.erase(s.begin() + axis);
  Array out(Type{a.dtype(), s});
  const std::int64_t outer = out.numel() / std::max<std::int64_t>(inner, 1);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) out.set(o * inner + i, a.at((o * n + e) * inner + i));
  return out;
}

// The RNN of tests/loops/test_scan.cpp, per example: h [1, H], xs [T, 1, D].
struct Rnn {
  Graph& g;
  Tensor h0, xs, W, U, b;
  explicit Rnn(Graph& graph) : g(graph) {
    h0 = g.input("h0", f64, {1, H});
    xs = g.input("xs", f64, {T, 1, D});
    W = g.input("W", f64, {H, H});
    U = g.input("U", f64, {D, H});
    b = g.input("b", f64, {H});
  }
  std::vector<Tensor> params() const { return {h0, xs, W, U, b}; }
  Tensor cell(const Tensor& h, const Tensor& x) const { return tanh(matmul(h, W) + matmul(x, U) + b); }
  std::pair<Tensor, Tensor> run_scan() const {
    return scan([&](const Tensor& h, const Tensor& x) {
      Tensor h2 = cell(h, x);
      return std::pair{h2, h2 * h};
    }, h0, xs);
  }
  std::pair<Tensor, Tensor> run_unrolled() const {
    Tensor h = h0;
    std::vector<Tensor> ys;
    for (std::int64_t t = 0; t < T; ++t) {
      Tensor h2 = cell(h, slice(xs, 0, t, t + 1).reshape({1, D}));
      ys.push_back((h2 * h).reshape({1, 1, H}));
      h = h2;
    }
    return {h, concat(ys, 0)};
  }
  Tensor loss(const std::pair<Tensor, Tensor>& r) const { return (r.second * r.second).sum() * 0.5 + r.first.sum(); }
  rt::Bindings values() const {
    return {{"h0", sample(h0.type(), 1)}, {"xs", sample(xs.type(), 2)}, {"W", sample(W.type(), 3, 0.5)},
            {"U", sample(U.type(), 4, 0.5)}, {"b", sample(b.type(), 5)}};
  }
};

void expect_near(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(to_string(got.type()), to_string(want.type())) << what;
  for (std::int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.at(i), want.at(i), 1e-12 * (1 + std::fabs(want.at(i)))) << what << " [" << i << "]";
}

TEST(ScanJvp, TanhRnnEqualsTheUnrolledGraphEverywhere) {
  Graph g;
  Rnn m(g);
  std::vector<Tensor> tangents;
  rt::Bindings bind = m.values();
  std::uint64_t seed = 20;
  for (const Tensor& p : m.params()) {
    const std::string name = "d" + p.value().node().name;
    tangents.push_back(g.input(name, f64, p.shape()));
    bind[name] = sample(p.type(), ++seed);
  }
  auto s = m.run_scan();
  auto u = m.run_unrolled();
  std::vector<Tensor> js = jvp({s.first, s.second, m.loss(s)}, m.params(), tangents);
  std::vector<Tensor> ju = jvp({u.first, u.second, m.loss(u)}, m.params(), tangents);
  std::vector<Tensor> outs = js;
  outs.insert(outs.end(), ju.begin(), ju.end());
  std::vector<Array> r = testing::run_everywhere(g, outs, bind);
  for (std::size_t k = 0; k < 3; ++k) expect_near(r[k], r[k + 3], "jvp output " + std::to_string(k));
  // Still one loop: the JVP is a scan, not an unrolled graph.
  std::size_t scans = 0;
  for (ir::NodeId id = 0; id < g.ir().size(); ++id)
    scans += g.ir().node(id).kind == ir::NodeKind::op && g.ir().node(id).op->name == "scan";
  EXPECT_EQ(scans, 2u);  // the forward scan and its JVP scan
}

TEST(ScanJvp, HessianVectorProductThroughScanEqualsTheUnrolledGraphs) {
  Graph g;
  Rnn m(g);
  rt::Bindings bind = m.values();
  Tensor v = g.input("v", f64, {H, H});
  bind["v"] = sample(Type{f64, {H, H}}, 9);
  auto [gs] = grad(m.loss(m.run_scan()), {m.W});
  auto [gu] = grad(m.loss(m.run_unrolled()), {m.W});
  Tensor hs = jvp({gs}, {m.W}, {v})[0];
  Tensor hu = jvp({gu}, {m.W}, {v})[0];
  std::vector<Array> r = testing::run_everywhere(g, {hs, hu}, bind);
  expect_near(r[0], r[1], "jvp(grad) through scan");
}

// vmap over every subset of (h0, xs, W), xs batched along its axis 1 (so the rule must
// move it behind the scan axis); h0 unbatched with xs batched makes the carry batched
// inside the body (broadcast up front).
TEST(ScanVmap, EqualsStackingOverTheBatchForEveryPattern) {
  for (unsigned subset = 1; subset < 8; ++subset) {
    SCOPED_TRACE("subset " + std::to_string(subset));
    Graph g;
    Rnn m(g);
    auto [hT, ys] = m.run_scan();
    const std::vector<Tensor> per{m.h0, m.xs, m.W};
    const std::vector<int> axis{0, 1, 2};
    rt::Bindings bind = m.values();
    std::vector<Tensor> args, batched;
    std::vector<BatchAxis> in_axes;
    std::vector<Array> stacked(3);
    for (std::size_t k = 0; k < 3; ++k) {
      if (!(subset >> k & 1)) continue;
      Shape s = per[k].shape();
      s.insert(s.begin() + axis[k], Bt);
      const std::string name = "B" + std::to_string(k);
      batched.push_back(g.input(name, f64, s));
      stacked[k] = sample(Type{f64, s}, 40 + k);
      bind[name] = stacked[k];
      args.push_back(per[k]);
      in_axes.push_back(axis[k]);
    }
    std::vector<Tensor> got_t = vmap({hT, ys}, args, batched, in_axes, {0});
    std::vector<Array> got = testing::run_everywhere(g, got_t, bind);
    for (std::int64_t e = 0; e < Bt; ++e) {
      rt::Bindings one = bind;
      for (std::size_t k = 0; k < 3; ++k)
        if (subset >> k & 1) one[per[k].value().node().name] = take(stacked[k], axis[k], e);
      std::vector<Array> want = rt::compile(g.ir(), {hT.value().id, ys.value().id}).run(one);
      for (std::size_t o = 0; o < 2; ++o)
        expect_near(take(got[o], 0, e), want[o], "output " + std::to_string(o) + " example " + std::to_string(e));
    }
  }
}

TEST(ScanVmap, PerSampleGradientsThroughAnRnnEqualTheLoopOfSingleGradients) {
  Graph g;
  Rnn m(g);
  const std::vector<Tensor> weights{m.W, m.U, m.b};
  std::vector<Tensor> single = grad(m.loss(m.run_scan()), weights);
  Tensor H0 = g.input("H0", f64, {Bt, 1, H});
  Tensor XS = g.input("XS", f64, {Bt, T, 1, D});
  std::vector<Tensor> per = vmap(single, {m.h0, m.xs}, {H0, XS}, {0, 0}, {0});
  rt::Bindings bind = m.values();
  bind["H0"] = sample(H0.type(), 50);
  bind["XS"] = sample(XS.type(), 51);
  std::vector<Array> got = testing::run_everywhere(g, per, bind);
  std::vector<ir::NodeId> ids;
  for (const Tensor& t : single) ids.push_back(t.value().id);
  rt::Executable one = rt::compile(g.ir(), ids);
  for (std::int64_t e = 0; e < Bt; ++e) {
    rt::Bindings b1 = bind;
    b1["h0"] = take(bind["H0"], 0, e);
    b1["xs"] = take(bind["XS"], 0, e);
    std::vector<Array> want = one.run(b1);
    for (std::size_t k = 0; k < want.size(); ++k)
      expect_near(take(got[k], 0, e), want[k], "parameter " + std::to_string(k) + " example " + std::to_string(e));
  }
}

// while c.sum() < 5: c = c * w + 0.3, for c f64[2]: the trip count depends on x and w.
struct Grow {
  Graph g;
  Tensor x = g.input("x", f64, {2}), w = g.input("w", f64, {2});
  Tensor y = while_loop([&](const Tensor& c) { return c.sum() < 5.0; },
                        [&](const Tensor& c) { return c * w + 0.3; }, x, 50);
};

TEST(WhileLoopJvp, MatchesCentralDifferencesEverywhere) {
  Grow m;
  Tensor vx = m.g.input("vx", f64, {2}), vw = m.g.input("vw", f64, {2});
  Tensor t = jvp({m.y}, {m.x, m.w}, {vx, vw})[0];
  const Array x = Array::from<double>({2}, {0.3, 0.7}), w = Array::from<double>({2}, {1.3, 1.1});
  const Array dx = Array::from<double>({2}, {0.4, -0.2}), dw = Array::from<double>({2}, {-0.3, 0.5});
  rt::Bindings bind{{"x", x}, {"w", w}, {"vx", dx}, {"vw", dw}};
  Array got = testing::run_everywhere(m.g, {t}, bind)[0];
  rt::Executable f = rt::compile(m.g.ir(), {m.y.value().id});
  const double h = 1e-6;
  auto at = [&](double s) {
    Array xs(x.type()), ws(w.type());
    for (std::int64_t i = 0; i < 2; ++i) {
      xs.set(i, x.at(i) + s * dx.at(i));
      ws.set(i, w.at(i) + s * dw.at(i));
    }
    return f.run({{"x", xs}, {"w", ws}})[0];
  };
  Array plus = at(h), minus = at(-h);
  for (std::int64_t i = 0; i < 2; ++i) {
    const double fd = (plus.at(i) - minus.at(i)) / (2 * h);
    EXPECT_NEAR(got.at(i), fd, 1e-6 * (1 + std::fabs(fd))) << i;
  }
}

TEST(WhileLoopVmap, DifferentTripCountsPerExampleEqualTheLoopOfExamples) {
  for (unsigned subset = 1; subset < 4; ++subset) {
    SCOPED_TRACE("subset " + std::to_string(subset));
    Grow m;
    const std::int64_t n = 4;
    Array X(Type{f64, {n, 2}}), W(Type{f64, {2, n}});  // W batched along its last axis
    for (std::int64_t e = 0; e < n; ++e)
      for (std::int64_t i = 0; i < 2; ++i) {
        X.set(e * 2 + i, 0.05 + 0.9 * static_cast<double>(e) / n + 0.1 * static_cast<double>(i));
        W.set(i * n + e, 1.05 + 0.15 * static_cast<double>(e + i));
      }
    rt::Bindings bind{{"x", take(X, 0, 0)}, {"w", take(W, 1, 0)}};
    if (subset & 1) bind["X"] = X;
    if (subset & 2) bind["W"] = W;
    std::vector<Tensor> args, batched;
    std::vector<BatchAxis> axes;
    if (subset & 1) {
      args.push_back(m.x);
      batched.push_back(m.g.input("X", f64, {n, 2}));
      axes.push_back(0);
    }
    if (subset & 2) {
      args.push_back(m.w);
      batched.push_back(m.g.input("W", f64, {2, n}));
      axes.push_back(1);
    }
    Tensor yb = vmap({m.y}, args, batched, axes, {0})[0];
    Array got = testing::run_everywhere(m.g, {yb}, bind)[0];
    rt::Executable f = rt::compile(m.g.ir(), {m.y.value().id});
    std::set<int> steps;  // the examples really stop at different steps (a plain C++ loop counts them)
    for (std::int64_t e = 0; e < n; ++e) {
      rt::Bindings one{{"x", bind["x"]}, {"w", bind["w"]}};
      if (subset & 1) one["x"] = take(X, 0, e);
      if (subset & 2) one["w"] = take(W, 1, e);
      Array want = f.run(one)[0];
      double c[2] = {one["x"].at(0), one["x"].at(1)};
      int k = 0;
      for (; c[0] + c[1] < 5.0; ++k)
        for (std::int64_t i = 0; i < 2; ++i) c[i] = c[i] * one["w"].at(i) + 0.3;
      steps.insert(k);
      expect_near(take(got, 0, e), want, "example " + std::to_string(e));
    }
    EXPECT_GT(steps.size(), 1u);
  }
}

// custom_vjp under vmap: the value is y batched; its backward is the batched backward.
// y = sin(w * x) with the surrogate backward dx = 3 r dy, dw = r x dy (r = w * x):
// per-sample gradients (vmap(grad)) take the author's rule for every example, and
// grad(sum(vmap(f))) w.r.t. the shared w sums the examples' rules.
TEST(CustomVjpVmap, PerSampleAndSharedGradientsTakeTheAuthorsBackward) {
  Graph g;
  Tensor x = g.input("x", f64, {2}), w = g.input("w", f64, {2});
  auto f = custom_vjp([](const Tensors& a) { return std::pair{sin(a[0] * a[1]), Tensors{a[0] * a[1]}}; },
                      [](const Tensors& r, const Tensors& a, const Tensor& dy) {
                        return Tensors{dy * r[0] * 3.0, dy * r[0] * a[0]};
                      });
  Tensor y = f({x, w});
  auto [dx, dw] = grad(y.sum(), {x, w});
  Tensor X = g.input("X", f64, {3, 2});
  std::vector<Tensor> per = vmap({y, dx, dw}, {x}, {X}, {0}, {0});
  auto [dW, dX] = grad(per[0].sum(), {w, X});  // through the batched node's backward
  const Array Xv = Array::from<double>({3, 2}, {0.1, -0.4, 0.7, 0.2, -0.3, 0.9});
  const Array wv = Array::from<double>({2}, {1.5, -0.5});
  std::vector<Array> r = testing::run_everywhere(g, {per[0], per[1], per[2], dW, dX}, {{"X", Xv}, {"w", wv}});
  double sum_dw[2] = {0, 0};
  for (std::int64_t e = 0; e < 3; ++e)
    for (std::int64_t i = 0; i < 2; ++i) {
      const double xi = Xv.at(e * 2 + i), wi = wv.at(i), ri = xi * wi;
      EXPECT_NEAR(r[0].at(e * 2 + i), std::sin(ri), 1e-15);
      EXPECT_NEAR(r[1].at(e * 2 + i), 3 * ri, 1e-15);   // the rule, not w cos(w x)
      EXPECT_NEAR(r[2].at(e * 2 + i), ri * xi, 1e-15);  // per example
      EXPECT_NEAR(r[4].at(e * 2 + i), 3 * ri, 1e-15);   // batched x: its own example's rule
      sum_dw[i] += ri * xi;
    }
  for (std::int64_t i = 0; i < 2; ++i) EXPECT_NEAR(r[3].at(i), sum_dw[i], 1e-14);  // shared w: the sum
}

}  // namespace
}  // namespace mg
