// custom_vjp (issue 14): grad takes the author's backward, not the derivative; the
// backward differentiates again (grad of grad); interpreter == C99; clear errors.
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

Array values(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Array::from_vector({n}, v);
}

// y = x^2, but the backward says dy * 3: grad is 3 everywhere, where the derivative is 2x.
TEST(CustomVjp, GradTakesTheAuthorsRuleNotTheDerivative) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto f = custom_vjp([](const Tensors& x) { return std::pair{x[0] * x[0], Tensors{}}; },
                      [](const Tensors&, const Tensors&, const Tensor& dy) { return Tensors{dy * 3.0}; });
  Tensor y = f(x);
  auto [dx] = grad(y.sum(), {x});
  auto r = compile(g, {y, dx}).run({{"x", values({1, -2, 0.5})}});
  testing::expect_values(r[0], {1, 4, 0.25});  // the value is the forward's
  testing::expect_values(r[1], {3, 3, 3});     // not {2, -4, 1}
}

// The backward dy * r^3 (r = x, a residual): grad = x^3, and grad of grad differentiates
// that backward: d/dx sum(x^3) = 3x^2; finite differences of the gradient graph agree to
// second order (third order through the custom rule overall).
TEST(CustomVjp, TheBackwardIsDifferentiable) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto f = custom_vjp([](const Tensors& x) { return std::pair{sin(x[0]), Tensors{x[0]}}; },
                      [](const Tensors& r, const Tensors&, const Tensor& dy) { return Tensors{dy * r[0] * r[0] * r[0]}; });
  auto [dx] = grad(f(x).sum(), {x});
  auto [ddx] = grad(dx.sum(), {x});
  const Array xv = values({1, -2, 0.5});
  auto r = compile(g, {dx, ddx}).run({{"x", xv}});
  testing::expect_values(r[0], {1, -8, 0.125});
  testing::expect_values(r[1], {3, 12, 0.75});
  auto c = testing::check_gradients(dx.sum().value(), {x.value()}, {xv}, 2, 1e-6, 7);
  EXPECT_TRUE(c.ok) << c.report;
  auto n = compile(g, {dx, ddx}, Backend::c99).run({{"x", xv}});
  testing::expect_values(n[0], {1, -8, 0.125});
  testing::expect_values(n[1], {3, 12, 0.75});
}

// A surrogate gradient (spiking nets): the step function has derivative 0 almost
// everywhere; the fast-sigmoid surrogate 1/(1+10|v|)^2 uses a captured sharpness.
TEST(CustomVjp, SurrogateGradientOfAStepWithACapturedParameter) {
  Graph g;
  Tensor v = g.input("v", f64, {3});
  Tensor k = g.input("k", f64, {});
  auto spike = custom_vjp(
      [](const Tensors& x) { return std::pair{(x[0] > 0.0).cast(f64), Tensors{x[0]}}; },
      [&](const Tensors& r, const Tensors&, const Tensor& dy) {
        Tensor d = abs(r[0]) * k + 1.0;
        return Tensors{dy / (d * d)};
      });
  Tensor s = spike(v);
  auto [dv] = grad(s.sum(), {v});
  auto r = compile(g, {s, dv}).run({{"v", values({0.5, -0.1, 0})}, {"k", Array::from_vector({}, std::vector<double>{10})}});
  testing::expect_values(r[0], {1, 0, 0});
  testing::expect_values(r[1], {1.0 / 36, 1.0 / 4, 1});
}

TEST(CustomVjp, ABackwardOfTheWrongTypeNamesTheUsersLine) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto f = custom_vjp([](const Tensors& x) { return std::pair{x[0] * 2.0, Tensors{}}; },
                      [](const Tensors&, const Tensors&, const Tensor& dy) { return Tensors{dy.sum()}; });
  const int line = __LINE__ + 2;
  try {
    f(x);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("returns f64[] for input 0 of type f64[3]"), std::string::npos) << e.what();
  }
}

// A value the forward reads besides xs (here W) gets no gradient from the author's
// backward: differentiating with respect to it is an error naming the custom_vjp's line
// and the value (as jax.custom_vjp refuses closed-over values), never a silent zero.
// Differentiating with respect to xs alone still works, and W in xs gets its gradient.
TEST(CustomVjp, AValueTheForwardReadsBesidesItsInputsIsNeverSilentlyGivenZero) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor W = g.input("W", f64, {3});
  auto closed = custom_vjp([&](const Tensors& xs) { return std::pair{xs[0] * W, Tensors{}}; },
                           [&](const Tensors&, const Tensors&, const Tensor& dy) { return Tensors{dy * W}; });
  const int line = __LINE__ + 1;
  Tensor y = closed(x).sum();
  try {
    grad(y, {W, x});
    FAIL() << "expected a GradError";
  } catch (const GradError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("its forward reads input 'W' (f64[3])"), std::string::npos) << e.what();
  }
  // W computed from x is read too: the gradient with respect to x would miss that path.
  Tensor z = x * 2.0;
  auto via_z = custom_vjp([&](const Tensors& xs) { return std::pair{xs[0] * z, Tensors{}}; },
                          [&](const Tensors&, const Tensors&, const Tensor& dy) { return Tensors{dy * z}; });
  EXPECT_THROW(grad(via_z(x).sum(), {x}), GradError);

  auto [dx] = grad(y, {x});  // W is not differentiated: its reading is harmless
  auto explicit_w = custom_vjp([](const Tensors& xs) { return std::pair{xs[0] * xs[1], Tensors{}}; },
                               [](const Tensors&, const Tensors& xs, const Tensor& dy) {
                                 return Tensors{dy * xs[1], dy * xs[0]};
                               });
  auto [dW] = grad(explicit_w({x, W}).sum(), {W});
  auto r = compile(g, {dx, dW}).run({{"x", values({1, 2, 3})}, {"W", values({4, 5, 6})}});
  testing::expect_values(r[0], {4, 5, 6});
  testing::expect_values(r[1], {1, 2, 3});
}

}  // namespace
}  // namespace mg
