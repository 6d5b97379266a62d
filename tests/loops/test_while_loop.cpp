// while_loop (issue 14): a bounded loop with a data-dependent trip count; both executors
// agree; exceeding max_steps and reverse mode without a custom_vjp are clear errors naming
// the user's line; a custom_vjp gives it a backward (Newton's square root, implicit rule).
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>

#include "tests/values.hpp"

namespace mg {
namespace {

Array scalar(double v) { return Array::from_vector({}, std::vector<double>{v}); }

// Halve x until it is at most a captured threshold, counting the steps.
TEST(WhileLoop, RunsWhileTheConditionHoldsWithCapturedValues) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  Tensor limit = g.input("limit", f64, {});
  Tensors r = while_loop([&](const Tensors& c) { return c[0] > limit; },
                         [](const Tensors& c) { return Tensors{c[0] * 0.5, c[1] + 1.0}; },
                         Tensors{x, g.scalar(0.0, f64)}, 100);
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto out = compile(g, {r[0], r[1]}, b).run({{"x", scalar(100)}, {"limit", scalar(1)}});
    EXPECT_EQ(out[0].at(0), 100.0 / 128);
    EXPECT_EQ(out[1].at(0), 7);
    auto none = compile(g, {r[0], r[1]}, b).run({{"x", scalar(0.5)}, {"limit", scalar(1)}});
    EXPECT_EQ(none[1].at(0), 0);  // the condition is checked before the first step
  }
}

TEST(WhileLoop, ExceedingMaxStepsIsARunTimeErrorNamingTheLine) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  const int line = __LINE__ + 1;
  Tensor r = while_loop([](const Tensor& c) { return c > 1.0; }, [](const Tensor& c) { return c * 0.5; }, x, 3);
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto exe = compile(g, {r}, b);
    EXPECT_EQ(exe.run({{"x", scalar(8)}})[0].at(0), 1);  // three steps: enough
    try {
      exe.run({{"x", scalar(9)}});
      FAIL() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
      EXPECT_NE(std::string(e.what()).find("while_loop"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("max_steps"), std::string::npos) << e.what();
    }
  }
}

TEST(WhileLoop, ReverseModeWithoutCustomVjpNamesTheLineAndTheWayOut) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  const int line = __LINE__ + 1;
  Tensor r = while_loop([](const Tensor& c) { return c > 1.0; }, [](const Tensor& c) { return c * 0.5; }, x, 100);
  try {
    grad(r, {x});
    FAIL() << "expected a GradError";
  } catch (const GradError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("while_loop"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("custom_vjp"), std::string::npos) << e.what();
  }
}

// sqrt(a) by Newton's iteration to convergence, differentiated by the implicit-function
// rule through a custom_vjp: d sqrt(a)/da = 1 / (2 y), y the residual.
TEST(WhileLoop, ACustomVjpGivesItABackward) {
  Graph g;
  Tensor a = g.input("a", f64, {});
  auto newton_sqrt = custom_vjp(
      [](const Tensors& in) {
        const Tensor a = in[0];
        Tensor y = while_loop([&](const Tensor& y) { return abs(y * y - a) > 1e-13; },
                              [&](const Tensor& y) { return (y + a / y) * 0.5; }, a, 100);
        return std::pair{y, Tensors{y}};
      },
      [](const Tensors& r, const Tensors&, const Tensor& dy) { return Tensors{dy / (r[0] * 2.0)}; });
  Tensor y = newton_sqrt(a);
  auto [da] = grad(y, {a});
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto out = compile(g, {y, da}, b).run({{"a", scalar(2)}});
    EXPECT_NEAR(out[0].at(0), std::sqrt(2.0), 1e-15);
    EXPECT_NEAR(out[1].at(0), 0.5 / std::sqrt(2.0), 1e-15);
  }
  // Grad of grad differentiates the backward, through its residual y: the loop's result,
  // which has no derivative of its own, so that is the same clear error.
  EXPECT_THROW(grad(da, {a}), GradError);
}

}  // namespace
}  // namespace mg
