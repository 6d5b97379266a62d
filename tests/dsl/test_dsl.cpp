// The DSL: expression templates and their type-level simplifications, lowering,
// broadcasting, matmul promotion rules, shape functions with Python semantics, and
// xtensor inputs and outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <xtensor/xview.hpp>

#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using testing::expect_values;
using testing::vec;

TEST(ExpressionTemplates, BuildLazilyAndLowerWhenBound) {
  Graph g;
  Tensor a = g.input("a", f64, {2});
  Tensor b = g.input("b", f64, {2});
  const std::size_t before = g.ir().size();
  auto e = relu(a * 2.0 + b);  // an expression object: no IR yet
  static_assert(!std::is_same_v<decltype(e), Tensor>);
  EXPECT_EQ(g.ir().size(), before);
  Tensor t = e;  // lowered here
  EXPECT_GT(g.ir().size(), before);
  EXPECT_EQ(t.value().node().op_name(), "relu");
  auto out = compile(g, {t}).run({{"a", vec({2}, {1, -3})}, {"b", vec({2}, {0.5, 1})}});
  expect_values(out[0], {2.5, 0});
}

TEST(ExpressionTemplates, HoldOperandsByValue) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  auto make = [&] { return exp(x + 1.0) * 3.0; };  // temporaries inside die here
  auto e = make();
  Tensor t = e;
  auto out = compile(g, {t}).run({{"x", Array::scalar(f64, 0)}});
  EXPECT_NEAR(out[0].at(0), 3 * std::exp(1.0), 1e-12);
}

TEST(ExpressionTemplates, StaticConstantsSimplifyAtTheTypeLevel) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  static_assert(std::is_same_v<decltype(x * c<1>), Tensor>);
  static_assert(std::is_same_v<decltype(c<1> * x), Tensor>);
  static_assert(std::is_same_v<decltype(x / c<1>), Tensor>);
  static_assert(std::is_same_v<decltype(x - c<0>), Tensor>);
  static_assert(std::is_same_v<decltype(pow(x, c<1>)), Tensor>);
  static_assert(std::is_same_v<decltype(-(-x)), Tensor>);
  static_assert(std::is_same_v<decltype(c<2> * c<3>), Const<6>>);
  static_assert(std::is_same_v<decltype(x * (c<2> - c<1>)), Tensor>);  // folded, then simplified
  static_assert(!std::is_same_v<decltype(x + c<0>), Tensor>);  // -0 + 0 is +0: not an identity
  Tensor sq = pow(x, c<2>);
  EXPECT_EQ(sq.value().node().op_name(), "square");
  Tensor rc = pow(x, c<-1>);
  EXPECT_EQ(rc.value().node().op_name(), "reciprocal");
  Tensor p3 = pow(x, c<3>);
  EXPECT_EQ(p3.value().node().op_name(), "pow");
  auto out = compile(g, {sq, rc, p3}).run({{"x", vec({3}, {1, 2, 4})}});
  expect_values(out[0], {1, 4, 16});
  expect_values(out[1], {1, 0.5, 0.25});
  expect_values(out[2], {1, 8, 64});
}

TEST(ExpressionTemplates, MethodsWorkOnUnloweredExpressions) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 2});
  Tensor s = (x * x).sum(1);
  Tensor m = (x + 1.0).mean();
  auto out = compile(g, {s, m}).run({{"x", vec({2, 2}, {1, 2, 3, 4})}});
  expect_values(out[0], {5, 25});
  expect_values(out[1], {3.5});
}

TEST(Broadcasting, InsertsExplicitBroadcastNodes) {
  Graph g;
  Tensor a = g.input("a", f64, {2, 1});
  Tensor b = g.input("b", f64, {3});
  Tensor c2 = a + b;
  EXPECT_EQ(c2.shape(), (Shape{2, 3}));
  const ir::Node& add = c2.value().node();
  for (ir::NodeId in : add.inputs) EXPECT_EQ(g.ir().node(in).op_name(), "broadcast_to");
  auto out = compile(g, {c2}).run({{"a", vec({2, 1}, {10, 20})}, {"b", vec({3}, {1, 2, 3})}});
  expect_values(out[0], {11, 12, 13, 21, 22, 23});
}

TEST(Broadcasting, ScalarsTakeTheTensorDtype) {
  Graph g;
  Tensor i = g.input("i", i64, {3});
  Tensor f = g.input("f", f32, {});
  Tensor ri = i * 2 + 1;
  Tensor rf = 1.0 - f;
  EXPECT_EQ(ri.dtype(), i64);
  EXPECT_EQ(rf.dtype(), f32);
  auto out = compile(g, {ri, rf}).run({{"i", Array::from<std::int64_t>({3}, {1, 2, 3})}, {"f", Array::scalar(f32, 0.25)}});
  expect_values(out[0], {3, 5, 7});
  expect_values(out[1], {0.75});
}

TEST(Matmul, FollowsTorchPromotionRules) {
  Graph g;
  Tensor m = g.input("m", f64, {2, 3});
  Tensor v = g.input("v", f64, {3});
  Tensor u = g.input("u", f64, {2});
  Tensor bt = g.input("bt", f64, {4, 3, 2});
  EXPECT_EQ(matmul(m, v).shape(), (Shape{2}));
  EXPECT_EQ(matmul(u, m).shape(), (Shape{3}));
  EXPECT_EQ(matmul(v, v).shape(), (Shape{}));
  EXPECT_EQ(matmul(m, bt).shape(), (Shape{4, 2, 2}));  // batch broadcast
  auto out = compile(g, {matmul(m, v), matmul(v, v)})
                 .run({{"m", vec({2, 3}, {1, 2, 3, 4, 5, 6})}, {"v", vec({3}, {1, 0, -1})}});
  expect_values(out[0], {-2, -2});
  expect_values(out[1], {2});
}

// A Linear on a sequence ([B, T, K] @ [K, N]) is one GEMM over B*T rows, as in torch: no
// node copies the weight per batch entry (forward or backward), and the values and the
// gradients (to second order) are those of the batched product.
TEST(Matmul, ABatchedOperandTimesAMatrixIsOneGemmWithoutBroadcastingTheMatrix) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3, 4});
  Tensor w = g.input("w", f64, {4, 5});
  Tensor y = matmul(x, w);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  Tensor loss = (tanh(y) * y).sum();
  auto [dx, dw] = grad(loss, {x, w});
  for (ir::NodeId id = 0; id < g.ir().size(); ++id) {  // (the gradient seed's broadcast is fine)
    const ir::Node& n = g.ir().node(id);
    if (n.op && n.op->name == "broadcast_to") EXPECT_NE(n.type.shape, (Shape{2, 4, 5})) << "w copied per entry: %" << id;
  }
  Array X = Array::zeros(Type{f64, {2, 3, 4}}), W = Array::zeros(Type{f64, {4, 5}});
  for (std::int64_t i = 0; i < X.numel(); ++i) X.set(i, std::sin(0.7 * static_cast<double>(i)));
  for (std::int64_t i = 0; i < W.numel(); ++i) W.set(i, std::cos(0.3 * static_cast<double>(i)));
  Array Y = compile(g, {y}).run({{"x", X}, {"w", W}})[0];
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 3; ++t)
      for (std::int64_t n = 0; n < 5; ++n) {
        double want = 0;
        for (std::int64_t k = 0; k < 4; ++k) want += X.at((b * 3 + t) * 4 + k) * W.at(k * 5 + n);
        EXPECT_NEAR(Y.at((b * 3 + t) * 5 + n), want, 1e-14);
      }
  auto c = mg::testing::check_gradients(loss.value(), {x.value(), w.value()}, {X, W}, 2, 1e-6, 3);
  EXPECT_TRUE(c.ok) << c.report;
}

TEST(ShapeFunctions, PythonSemantics) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor r = x.reshape({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  Tensor rev = slice(x, 1, std::nullopt, std::nullopt, -1);  // x[:, ::-1]
  Tensor tail = slice(x, 1, -2, std::nullopt);                // x[:, -2:]
  Tensor st = stack({x, x}, 1);
  EXPECT_EQ(st.shape(), (Shape{2, 2, 3}));
  Tensor p = pad(x, {{1, 0}, {0, 2}}, -1.0);
  EXPECT_EQ(p.shape(), (Shape{3, 5}));
  Tensor f = x.T().flatten();
  auto out = compile(g, {rev, tail, p, f}).run({{"x", vec({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_values(out[0], {3, 2, 1, 6, 5, 4});
  expect_values(out[1], {2, 3, 5, 6});
  expect_values(out[2], {-1, -1, -1, -1, -1, 1, 2, 3, -1, -1, 4, 5, 6, -1, -1});
  expect_values(out[3], {1, 4, 2, 5, 3, 6});
}

TEST(Xtensor, ArraysAndViewsBindAsInputs) {
  Graph g;
  Tensor x = g.input("x", f64, {3, 4});
  Tensor w = g.input("w", f64, {4, 2});
  Tensor y = (relu(matmul(x, w) + 1.0) * 2.0).sum();
  auto [dw] = grad(y, {w});
  auto [ddw] = grad((dw * dw).sum(), {w});
  Executable exe = compile(g, {y, dw, ddw});
  xt::xarray<double> X = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  xt::xarray<double> Wbig = {{9, 1, 2, 9}, {9, 3, 4, 9}, {9, -5, -6, 9}, {9, 7, 8, 9}};
  auto W = xt::view(Wbig, xt::all(), xt::range(1, 3));  // a view, not a container
  auto out = exe.run({{"x", X}, {"w", W}});
  // xw = rows 0..2 of W: [[1,2],[3,4],[-5,-6]]; +1 -> [[2,3],[4,5],[-4,-5]]; relu; *2; sum
  EXPECT_DOUBLE_EQ(out[0].at(0), 2 * (2 + 3 + 4 + 5));
  xt::xarray<double> dW = to_xarray<double>(out[1]);
  xt::xarray<double> want = {{2, 2}, {2, 2}, {0, 0}, {0, 0}};  // 2 * x^T [relu' mask]
  EXPECT_EQ(dW, want);
  expect_values(out[2], {0, 0, 0, 0, 0, 0, 0, 0});  // dw is piecewise constant in w
}

}  // namespace
}  // namespace mg
