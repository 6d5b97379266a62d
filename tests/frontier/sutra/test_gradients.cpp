// Gradients of odeint three ways on torchdiffeq's spiral y' = (y^3) A (f64, solver
// rtol = atol = 1e-7): the adjoint agrees with backprop through the solver and with finite
// differences within the solver's tolerance; backprop is the exact derivative of the
// discretisation (finite differences to 1e-6, first and second order, gradcheck_lib);
// grad of grad through the adjoint of a fixed-step method; interpreter == C99; NFE of the
// backward; NeuralODE's module parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <minigrad/frontier/sutra.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/ops/gradcheck.hpp"

namespace mg::frontier::sutra {
namespace {

Array arr(Shape s, std::vector<double> v) { return Array::from_vector(std::move(s), v); }

const std::vector<double> kY0{2, 0}, kA{-0.1, -2.0, 2.0, -0.1}, kTs{0, 0.4, 0.9, 1.5};
const std::vector<double> kW{0.3, -1.2, 0.7, 0.5, -0.4, 1.1, 0.9, -0.6};  // loss weights, [4, 2]

// loss = sum(ys * W) for y' = (y^3) A.
struct Spiral {
  Graph g;
  Tensor y0 = g.input("y0", f64, {2}), A = g.input("A", f64, {2, 2}), ts = g.input("ts", f64, {4});
  Solution sol;
  Tensor loss;
  explicit Spiral(const Options& opt) {
    sol = odeint([](const Tensor&, const Tensor& y, const Tensors& p) { return matmul((y * y * y).unsqueeze(0), p[0]).reshape({2}); },
                 y0, ts, {A}, opt);
    loss = (sol.ys * g.constant(arr({4, 2}, kW))).sum();
  }
  std::vector<Feed> feeds(std::vector<double> y = kY0, std::vector<double> a = kA) const {
    return {{"y0", arr({2}, y)}, {"A", arr({2, 2}, a)}, {"ts", arr({4}, kTs)}};
  }
};

// [dL/dy0..., dL/dA...] from the gradient graph.
std::vector<double> gradient(const Options& opt, Backend b = Backend::interpreter) {
  Spiral s(opt);
  auto [dy0, dA] = grad(s.loss, {s.y0, s.A});
  auto r = compile(s.g, {dy0, dA}, b).run(s.feeds());
  std::vector<double> v;
  for (const Array& a : r)
    for (std::int64_t i = 0; i < a.numel(); ++i) v.push_back(a.at(i));
  return v;
}

// Central differences of the forward-only solve at the same tolerance.
std::vector<double> finite_differences(const Options& opt, double eps) {
  Options fwd = opt;
  fwd.grad = Grad::none;
  Spiral s(fwd);
  auto exe = compile(s.g, {s.loss});
  std::vector<double> v;
  for (int which = 0; which < 2; ++which) {
    const std::size_t n = which == 0 ? 2 : 4;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> y = kY0, a = kA;
      double& x = which == 0 ? y[i] : a[i];
      const double x0 = x;
      x = x0 + eps;
      const double fp = exe.run(s.feeds(y, a))[0].at(0);
      x = x0 - eps;
      const double fm = exe.run(s.feeds(y, a))[0].at(0);
      v.push_back((fp - fm) / (2 * eps));
    }
  }
  return v;
}

double worst_relative(const std::vector<double>& a, const std::vector<double>& b) {
  double w = 0;
  for (std::size_t i = 0; i < a.size(); ++i) w = std::max(w, std::abs(a[i] - b[i]) / (1 + std::abs(b[i])));
  return w;
}

// The adjoint solves the continuous adjoint ODE backward, backprop differentiates the
// forward's discretisation exactly (central differences, eps 1e-6, agree to 1e-7); both
// approximate the true gradient (a 1e-12 solve) to the solver's accuracy.
TEST(Gradients, AdjointAgreesWithBackpropAndFiniteDifferences) {
  for (Method m : {Method::dopri5, Method::tsit5}) {
    const Options opt{.method = m, .rtol = 1e-7, .atol = 1e-7};
    Options adj = opt, bp = opt;
    adj.grad = Grad::adjoint;
    bp.grad = Grad::backprop;
    const auto ga = gradient(adj), gb = gradient(bp), fd = finite_differences(opt, 1e-6);
    const double ab = worst_relative(ga, gb), bf = worst_relative(gb, fd), af = worst_relative(ga, fd);
    const auto truth = gradient({.method = m, .rtol = 1e-12, .atol = 1e-12, .grad = Grad::adjoint});
    const double at = worst_relative(ga, truth), bt = worst_relative(gb, truth);
    std::printf("%s, tol 1e-7: |adjoint - backprop| %.1e, |backprop - fd| %.1e, |adjoint - fd| %.1e, "
                "|adjoint - true| %.1e, |backprop - true| %.1e\n",
                to_string(m).c_str(), ab, bf, af, at, bt);
    EXPECT_LT(bf, 1e-7) << to_string(m);  // backprop: the discretisation's exact derivative
    EXPECT_LT(at, 2e-5) << to_string(m);  // both within 200 x tol of the true gradient,
    EXPECT_LT(bt, 2e-5) << to_string(m);
    EXPECT_LT(ab, 4e-5) << to_string(m);  // so within 400 x tol of each other
    EXPECT_LT(af, 4e-5) << to_string(m);
    // ... and the errors shrink with the tolerance (measured: ~10x per decade).
    Options a9 = adj, b9 = bp;
    a9.rtol = a9.atol = b9.rtol = b9.atol = 1e-9;
    const double at9 = worst_relative(gradient(a9), truth), bt9 = worst_relative(gradient(b9), truth);
    std::printf("%s, tol 1e-9: |adjoint - true| %.1e, |backprop - true| %.1e\n", to_string(m).c_str(), at9, bt9);
    EXPECT_LT(at9, 2e-7) << to_string(m);
    EXPECT_LT(bt9, 1e-6) << to_string(m);
    // At 1e-12 the two agree to 1e-9.
    EXPECT_LT(worst_relative(truth, gradient({.method = m, .rtol = 1e-12, .atol = 1e-12})), 1e-9) << to_string(m);
  }
}

TEST(Gradients, AdjointInterpreterEqualsC99) {
  const Options opt{.method = Method::dopri5, .rtol = 1e-7, .atol = 1e-7, .grad = Grad::adjoint};
  const auto a = gradient(opt, Backend::interpreter), b = gradient(opt, Backend::c99);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-13) << i;
}

// Backprop through a fixed-step rk4 and through the bounded adaptive scan: the registry's
// gradient checker, first and second order.
TEST(Gradients, BackpropIsTheDiscretisationsExactGradientToSecondOrder) {
  for (Method m : {Method::rk4, Method::dopri5}) {
    Spiral s({.method = m, .rtol = 1e-6, .atol = 1e-6, .max_steps = 64, .steps_per_interval = 4});
    // Away from y = 0: the error tolerance uses |y|, a kink of the discretisation there.
    const auto f = s.feeds({2, 0.3});
    auto r1 = testing::check_gradients(s.loss.value(), {s.y0.value(), s.A.value(), s.ts.value()},
                                       {f[0].value, f[1].value, f[2].value}, 2, 1e-6, 3);
    EXPECT_TRUE(r1.ok) << to_string(m) << ": " << r1.report;
  }
}

// The adjoint of a fixed-step method is a scan, so it differentiates again: the gradient of
// its gradient agrees with finite differences of the adjoint gradient.
TEST(Gradients, GradOfGradThroughTheAdjointOfAFixedStepMethod) {
  Spiral s({.method = Method::rk4, .grad = Grad::adjoint, .steps_per_interval = 8});
  auto [dA] = grad(s.loss, {s.A});
  const Tensor gsum = (dA * dA).sum();
  auto [ddA] = grad(gsum, {s.A});
  const auto f = s.feeds();
  auto c = testing::check_gradients(gsum.value(), {s.y0.value(), s.A.value(), s.ts.value()},
                                    {f[0].value, f[1].value, f[2].value}, 1, 1e-6, 5);
  EXPECT_TRUE(c.ok) << c.report;
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto r = compile(s.g, {ddA}, b).run(f);
    EXPECT_TRUE(std::isfinite(r[0].at(0)));
  }
  // The adaptive adjoint's backward is a while_loop: grad of grad is a GradError.
  Spiral a({.method = Method::dopri5, .grad = Grad::adjoint});
  auto [dA2] = grad(a.loss, {a.A});
  EXPECT_THROW(grad((dA2 * dA2).sum(), {a.A}), GradError);
}

TEST(Gradients, TheBackwardNfeIsReadThroughTheProbe) {
  Spiral s({.method = Method::dopri5, .grad = Grad::adjoint});
  auto d = grad(s.loss, std::vector<Tensor>{s.A, s.sol.nfe_probe});
  auto r = compile(s.g, {s.sol.nfe, d[1]}).run(s.feeds());
  std::printf("dopri5 adjoint: forward NFE %g, backward NFE %g\n", r[0].at(0), r[1].at(0));
  EXPECT_GT(r[0].at(0), 2);
  EXPECT_GT(r[1].at(0), 3 * 2);  // at least the 3 intervals' initial steps
  EXPECT_EQ(std::fmod(r[1].at(0), 2), 0);
}

// A NeuralODE over an nn module: the module's parameters get the adjoint's gradients,
// which agree with backprop's.
struct Field {
  nn::Linear l1{2, 8, true, f64}, l2{8, 2, true, f64};
  Tensor operator()(const Tensor& y) const { return l2(tanh(l1(y * y * y))); }
  template <class F>
  void for_each_parameter(F&& f) {
    nn::for_each_parameter(l1, [&](const std::string& n, nn::Parameter& p) { f("l1." + n, p); });
    nn::for_each_parameter(l2, [&](const std::string& n, nn::Parameter& p) { f("l2." + n, p); });
  }
};

TEST(Gradients, NeuralOdeModuleParametersAdjointEqualsBackprop) {
  std::vector<std::vector<double>> by_mode;
  for (Grad gm : {Grad::adjoint, Grad::backprop}) {
    NeuralODE<Field> node(Field{}, {.rtol = 1e-7, .atol = 1e-7, .grad = gm});
    Graph g;
    nn::bind(node, g, 7);
    Tensor y0 = g.input("y0", f64, {3, 2}), ts = g.input("ts", f64, {4});
    Tensor loss = (node(y0, ts) * node(y0, ts)).mean();
    std::vector<Tensor> wrt;
    for (nn::Parameter* p : nn::parameters(node)) wrt.push_back(p->tensor);
    ASSERT_EQ(wrt.size(), 4u);
    auto d = grad(loss, wrt);
    std::vector<Feed> feeds{{"y0", arr({3, 2}, {2, 0, 1, 0.5, -0.5, 1})}, {"ts", arr({4}, kTs)}};
    for (nn::Parameter* p : nn::parameters(node)) feeds.push_back({p->name(), p->value()});
    auto r = compile(g, d).run(feeds);
    std::vector<double> v;
    for (const Array& a : r)
      for (std::int64_t i = 0; i < a.numel(); ++i) v.push_back(a.at(i));
    by_mode.push_back(v);
  }
  EXPECT_LT(worst_relative(by_mode[0], by_mode[1]), 1e-5);
}

}  // namespace
}  // namespace mg::frontier::sutra

namespace mg::frontier::sutra {
namespace {

// The memory claim, planned (deterministic, no timing): the adjoint's gradient plans the
// same peak bytes for 10 and 1000 rk4 steps; direct backprop's grows with the steps, and
// checkpointing keeps it near the adjoint's order.
TEST(Memory, TheAdjointsPlannedPeakIsFlatInTheStepCount) {
  auto peak = [](Grad gm, std::int64_t steps, std::int64_t k) {
    Spiral s({.method = Method::rk4, .grad = gm, .steps_per_interval = steps, .checkpoint_every = k});
    auto [dA] = grad(s.loss, {s.A});
    return compile(s.g, {dA}).peak_bytes();
  };
  EXPECT_EQ(peak(Grad::adjoint, 10, 0), peak(Grad::adjoint, 1000, 0));
  EXPECT_GT(peak(Grad::backprop, 1000, 0), 50 * peak(Grad::backprop, 10, 0));
  EXPECT_LT(peak(Grad::backprop, 1000, 25), peak(Grad::backprop, 1000, 0) / 10);
}

// Checkpointing the bounded adaptive scan recomputes instead of storing: the same gradient.
TEST(Memory, CheckpointingTheAdaptiveScanKeepsTheGradient) {
  std::vector<std::vector<double>> g;
  std::vector<std::size_t> peaks;
  for (std::int64_t k : {0, 20}) {
    Spiral s({.method = Method::dopri5, .rtol = 1e-7, .atol = 1e-7, .max_steps = 400, .checkpoint_every = k});
    auto [dy0, dA] = grad(s.loss, {s.y0, s.A});
    auto exe = compile(s.g, {dy0, dA});
    peaks.push_back(exe.peak_bytes());
    auto r = exe.run(s.feeds());
    g.push_back({r[0].at(0), r[0].at(1), r[1].at(0), r[1].at(1), r[1].at(2), r[1].at(3)});
  }
  for (std::size_t i = 0; i < g[0].size(); ++i) EXPECT_NEAR(g[0][i], g[1][i], 1e-12 * (1 + std::abs(g[0][i]))) << i;
  EXPECT_LT(peaks[1], peaks[0] / 5);
}

}  // namespace
}  // namespace mg::frontier::sutra
