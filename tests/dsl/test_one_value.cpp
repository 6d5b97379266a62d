// DESIGN invariant 10 in the DSL: an expression is one value (bound to `auto`, used twice,
// differentiated against, it is one node), and a run given an unknown input lists the ones
// it has. run also takes a name -> Array map.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <unordered_map>

#include <minigrad/minigrad.hpp>

namespace mg {
namespace {

Array ramp(Shape s, double start, double step) {
  Array a(Type{f64, s});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, start + step * static_cast<double>(i));
  return a;
}

TEST(OneValue, AnExpressionUsedTwiceIsOneNode) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto h = tanh(x) * 2.0;
  Tensor a = h, b = h;  // both handles name the node h lowered to
  EXPECT_EQ(a.value().id, b.value().id);
  Tensor y = (h * h).sum();
  // The same computation with h bound to a Tensor first builds exactly as many nodes.
  Graph g2;
  Tensor x2 = g2.input("x", f64, {3});
  Tensor h2 = tanh(x2) * 2.0;
  Tensor y2 = (h2 * h2).sum();
  EXPECT_EQ(g.ir().size(), g2.ir().size()) << "h was lowered more than once";
  (void)y, (void)y2;
}

TEST(OneValue, GradWithRespectToAnExpression) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto h = tanh(x) * 2.0;
  auto y = (h * h).sum();
  auto [dh] = grad(y, {h});             // the expression itself
  auto [dh_t] = grad(y, {Tensor(h)});   // or a Tensor bound from it: the same node
  auto [dx] = grad(y, {x});
  Executable exe = compile(g, {dh, dh_t, dx, Tensor(h)});
  Array X = ramp({3}, -0.5, 0.4);
  auto out = exe.run({{"x", X}});
  for (int i = 0; i < 3; ++i) {
    const double hv = 2 * std::tanh(X.at(i));
    EXPECT_DOUBLE_EQ(out[3].at(i), hv);
    EXPECT_NEAR(out[0].at(i), 2 * hv, 1e-12) << "d(sum h^2)/dh must be 2h, not zero";
    EXPECT_NEAR(out[1].at(i), 2 * hv, 1e-12);
    const double t = std::tanh(X.at(i));
    EXPECT_NEAR(out[2].at(i), 2 * hv * 2 * (1 - t * t), 1e-12);
  }
}

TEST(OneValue, CopiesOfAnExpressionShareTheirNode) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  auto e = exp(x) + 1.0;
  auto copy = e;  // a copy made before lowering still lowers to the same node
  Tensor a = copy;
  Tensor b = e;
  EXPECT_EQ(a.value().id, b.value().id);
}

TEST(OneValue, UnknownFeedListsTheInputs) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  Tensor w = g.input("weight", f64, {2});
  Executable exe = compile(g, {(x * w).sum()});
  try {
    exe.run({{"x", ramp({2}, 0, 1)}, {"wieght", ramp({2}, 0, 1)}});
    FAIL() << "no error for an unknown input";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'wieght'"), std::string::npos) << m;
    EXPECT_NE(m.find("x, weight"), std::string::npos) << m;
  }
}

TEST(OneValue, RunTakesANameToArrayMap) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  Tensor w = g.input("weight", f64, {2});
  Executable exe = compile(g, {(x * w).sum()});
  const std::map<std::string, Array> feeds{{"x", ramp({2}, 1, 1)}, {"weight", ramp({2}, 3, 1)}};
  EXPECT_EQ(exe.run(feeds)[0].at(0), 1 * 3 + 2 * 4);
  std::unordered_map<std::string, Array> typo{{"x", ramp({2}, 1, 1)}, {"wieght", ramp({2}, 3, 1)}};
  EXPECT_THROW(exe.run(typo), UserError);
}

}  // namespace
}  // namespace mg
