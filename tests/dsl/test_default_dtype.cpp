// One default float dtype (mg::default_float, f32) for every creation function without an
// explicit dtype, so scalars, constants and inputs made without one combine.
#include <gtest/gtest.h>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/values.hpp"

namespace mg {
namespace {

using testing::expect_values;

static_assert(default_float == f32);

TEST(DefaultDtype, EveryCreationFunctionUsesIt) {
  Graph g;
  EXPECT_EQ(g.input("x", {2, 3}).dtype(), default_float);
  EXPECT_EQ(g.input("x0", {}).dtype(), default_float);
  EXPECT_EQ(g.input("x2", {}).shape(), Shape{});
  EXPECT_EQ(g.input("x1", {2, 3}).shape(), (Shape{2, 3}));
  EXPECT_EQ(g.scalar(2.0).dtype(), default_float);
  EXPECT_EQ(g.full({2}, 1.5).dtype(), default_float);
  EXPECT_EQ(g.zeros({2}).dtype(), default_float);
  EXPECT_EQ(g.ones({2}).dtype(), default_float);
  EXPECT_EQ(g.eye(3).dtype(), default_float);
  EXPECT_EQ(g.randn({2}, 1).dtype(), default_float);
  EXPECT_EQ(g.rand({2}, 1).dtype(), default_float);
  EXPECT_EQ(one_hot(g.input("i", i64, {3}), 4).dtype(), default_float);
  EXPECT_EQ(nn::Linear(2, 3).weight.dtype, default_float);
}

TEST(DefaultDtype, ScalarsCombineWithDefaultInputs) {
  Graph g;
  Tensor x = g.input("x", {3});
  Tensor y = x * g.scalar(2.0) + g.ones({3});  // f64 scalars made this a dtype error
  EXPECT_EQ(y.dtype(), f32);
  auto out = compile(g, {y}).run({{"x", Array::from<float>({3}, {1, -2, 0.5f})}});
  EXPECT_EQ(out[0].dtype(), f32);
  expect_values(out[0], {3, -3, 2});
}

TEST(DefaultDtype, AnExplicitDtypeStillWins) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  Tensor y = x * g.scalar(0.1, f64);
  EXPECT_EQ(y.dtype(), f64);
  auto out = compile(g, {y}).run({{"x", Array::from<double>({2}, {1, 3})}});
  expect_values(out[0], {0.1, 0.30000000000000004}, 0);
  Tensor z = g.input("z", {2});
  EXPECT_THROW((void)Tensor(z * g.scalar(1.0, f64)), ShapeError);
}

}  // namespace
}  // namespace mg
