// Constants and masks made from a tensor's own graph: graph_of, full_like/zeros_like/
// ones_like, tril/triu and masked_fill — values against hand-computed ones, gradients
// against finite differences, and a module that uses them inside nn::Sequential.
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/ops/gradcheck.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using testing::expect_values;
using testing::vec;

Array iota_f64(Shape s) {
  Array a(Type{f64, std::move(s)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, static_cast<double>(i + 1));
  return a;
}

template <class E>
std::string error_of(E&& build) {
  try {
    build();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphOf, SharesTheTensorsGraph) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Graph h = graph_of(x);
  EXPECT_EQ(&h.ir(), &g.ir());
  EXPECT_EQ(h.shared(), g.shared());
  Tensor y = x + h.arange(0, 3, 1, f64) * h.ones({3}, f64);
  auto out = compile(g, {y}).run({{"x", vec({3}, {10, 20, 30})}});
  expect_values(out[0], {10, 21, 32});
}

TEST(GraphOf, KeepsTheGraphAlive) {
  Graph kept = [] {
    Graph g;
    Tensor x = g.input("x", f64, {2});
    Tensor y = x * 2.0;
    g.ir().outputs = {y.value().id};
    return graph_of(y);
  }();  // the original mg::Graph is gone; the graph is not
  EXPECT_EQ(kept.ir().outputs.size(), 1u);
  EXPECT_TRUE(kept.ir().input("x").valid());
}

TEST(GraphOf, EmptyHandlesAndUnownedGraphsAreUserErrors) {
  EXPECT_NE(error_of([] { (void)graph_of(Tensor()); }).find("empty handle"), std::string::npos);
  ir::Graph raw;  // not owned by an mg::Graph
  Tensor x(raw.add_input("x", Type{f64, {2}}));
  std::string m = error_of([&] { (void)graph_of(x); });
  EXPECT_NE(m.find("not owned by an mg::Graph"), std::string::npos) << m;
  EXPECT_NE(m.find("test_masking.cpp"), std::string::npos) << m;  // the user's line
}

TEST(FullLike, TakesShapeAndDtypeFromTheTensor) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor f = full_like(x, 7);
  EXPECT_EQ(f.type(), (Type{f64, {2, 3}}));
  EXPECT_EQ(full_like(x, 1.5, f32).type(), (Type{f32, {2, 3}}));
  EXPECT_EQ(zeros_like(x).type(), x.type());
  EXPECT_EQ(ones_like(x, boolean).type(), (Type{boolean, {2, 3}}));
  Tensor i = g.input("i", i64, {4});
  EXPECT_EQ(ones_like(i).dtype(), i64);
  auto out = compile(g, {f, ones_like(x), zeros_like(i)}).run({{"x", iota_f64({2, 3})}, {"i", Array::zeros(Type{i64, {4}})}});
  expect_values(out[0], {7, 7, 7, 7, 7, 7});
  expect_values(out[1], {1, 1, 1, 1, 1, 1});
  expect_values(out[2], {0, 0, 0, 0});
  EXPECT_EQ(out[2].dtype(), i64);
  EXPECT_NE(error_of([&] { (void)full_like(i, 0.5); }).find("not an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)full_like(x, 2, boolean); }).find("not 0 or 1"), std::string::npos);
  EXPECT_THROW((void)zeros_like(Tensor()), ShapeError);
}

TEST(TrilTriu, KeepTheBandTorchKeeps) {
  Graph g;
  Tensor x = g.input("x", f64, {3, 4});  // 1..12
  std::vector<Tensor> ys{tril(x), tril(x, 1), tril(x, -1), triu(x), triu(x, 2), triu(x, -1)};
  auto out = compile(g, ys).run({{"x", iota_f64({3, 4})}});
  expect_values(out[0], {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  expect_values(out[1], {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  expect_values(out[2], {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expect_values(out[3], {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  expect_values(out[4], {0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0});
  expect_values(out[5], {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
}

TEST(TrilTriu, BatchedAndAnyDtype) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 2, 2});
  Tensor i = g.input("i", i64, {2, 3});
  Tensor b = ones_like(g.input("b", boolean, {2, 2}));
  auto out = compile(g, {tril(x), triu(i, 1), tril(b)})
                 .run({{"x", iota_f64({2, 2, 2})}, {"i", Array::from<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"b", Array::from<bool>({2, 2}, {false, false, false, false})}});
  expect_values(out[0], {1, 0, 3, 4, 5, 0, 7, 8});
  EXPECT_EQ(out[1].dtype(), i64);
  expect_values(out[1], {0, 2, 3, 0, 0, 6});
  EXPECT_EQ(out[2].dtype(), boolean);
  expect_values(out[2], {1, 0, 1, 1});
}

TEST(TrilTriu, NeedAMatrix) {
  Graph g;
  Tensor v = g.input("v", f64, {3});
  std::string m = error_of([&] { (void)tril(v); });
  EXPECT_NE(m.find("op 'tril'"), std::string::npos) << m;
  EXPECT_NE(m.find("rank >= 2"), std::string::npos) << m;
  EXPECT_NE(m.find("f64[3]"), std::string::npos) << m;
  EXPECT_NE(error_of([&] { (void)triu(v); }).find("op 'triu'"), std::string::npos);
}

TEST(TrilTriu, GradientsMatchHandAndFiniteDifferences) {
  Graph g;
  Tensor x = g.input("x", f64, {3, 4});
  auto [dl] = grad(tril(x).sum() + 2.0 * triu(x, 1).sum(), {x});
  auto out = compile(g, {dl}).run({{"x", iota_f64({3, 4})}});
  expect_values(out[0], {1, 2, 2, 2, 1, 1, 2, 2, 1, 1, 1, 2});
  for (std::int64_t k : {-1, 0, 2}) {
    Tensor y = tril(x, k) * triu(x, -k);  // a non-linear use of both
    auto r = testing::check_gradients(y.value(), {x.value()}, {testing::sample(x.type(), ir::Domain::any, 5)}, 2,
                                      1e-6, 6 + k);
    EXPECT_TRUE(r.ok) << "k=" << k << ": " << r.report;
  }
  Tensor z = g.input("z", f64, {2, 3, 3});
  Tensor w = tanh(triu(z, -1));
  auto r = testing::check_gradients(w.value(), {z.value()}, {testing::sample(z.type(), ir::Domain::any, 8)}, 2, 1e-6, 9);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(MaskedFill, FillsWhereTheMaskIsTrue) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});  // 1..6
  Tensor m = g.input("m", boolean, {3});
  Tensor v = g.input("v", f64, {});
  std::vector<Tensor> ys{masked_fill(x, m, -1.0), masked_fill(x, x > 3.0, 0.0), masked_fill(x, m, v),
                         masked_fill(x, m, -INFINITY)};
  auto out = compile(g, ys).run({{"x", iota_f64({2, 3})}, {"m", Array::from<bool>({3}, {true, false, true})},
                                 {"v", Array::scalar(f64, 9)}});
  expect_values(out[0], {-1, 2, -1, -1, 5, -1});
  expect_values(out[1], {1, 2, 3, 0, 0, 0});
  expect_values(out[2], {9, 2, 9, 9, 5, 9});
  EXPECT_EQ(out[3].at({0, 0}), -INFINITY);
  EXPECT_EQ(out[3].at({1, 1}), 5);
}

TEST(MaskedFill, BroadcastsMaskAndTensorLikeTorch) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor m = g.input("m", boolean, {2, 1});
  Tensor y = masked_fill(x, m, 0.0);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  auto out = compile(g, {y}).run({{"x", vec({3}, {1, 2, 3})}, {"m", Array::from<bool>({2, 1}, {false, true})}});
  expect_values(out[0], {1, 2, 3, 0, 0, 0});
  Tensor i = g.input("i", i64, {2});
  Tensor b = g.input("b", boolean, {2});
  auto out2 = compile(g, {masked_fill(i, b, 5), masked_fill(b, b, 0)})
                  .run({{"i", Array::from<std::int64_t>({2}, {1, 2})}, {"b", Array::from<bool>({2}, {true, false})}});
  EXPECT_EQ(out2[0].dtype(), i64);
  expect_values(out2[0], {5, 2});
  EXPECT_EQ(out2[1].dtype(), boolean);
  expect_values(out2[1], {0, 0});
}

TEST(MaskedFill, ErrorsNameTheOpAndTypes) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor fm = g.input("fm", f64, {3});
  Tensor m4 = g.input("m4", boolean, {4});
  Tensor i = g.input("i", i64, {3});
  std::string e = error_of([&] { (void)masked_fill(x, fm, 0.0); });
  EXPECT_NE(e.find("op 'masked_fill'"), std::string::npos) << e;
  EXPECT_NE(e.find("must be bool"), std::string::npos) << e;
  e = error_of([&] { (void)masked_fill(x, m4, 0.0); });
  EXPECT_NE(e.find("cannot broadcast"), std::string::npos) << e;
  EXPECT_NE(e.find("bool[4]"), std::string::npos) << e;
  e = error_of([&] { (void)masked_fill(i, i > 0, 0.5); });
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
  e = error_of([&] { (void)masked_fill(x, x > 0.0, g.input("v", f32, {})); });
  EXPECT_NE(e.find("0-d tensor of the tensor's dtype f64"), std::string::npos) << e;
  Graph other;
  Tensor om = other.input("om", boolean, {3});
  EXPECT_NE(error_of([&] { (void)masked_fill(x, om, 0.0); }).find("different graph"), std::string::npos);
}

TEST(MaskedFill, GradientsMatchHandAndFiniteDifferences) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor m = g.input("m", boolean, {3});
  Tensor v = g.input("v", f64, {});
  auto [dx, dv] = grad((masked_fill(x, m, v) * x).sum(), {x, v});
  auto out = compile(g, {dx, dv}).run({{"x", iota_f64({2, 3})}, {"m", Array::from<bool>({3}, {true, false, true})},
                                       {"v", Array::scalar(f64, 9)}});
  // d/dx_k of sum(where(m, v, x) * x) = (m_k ? v : 2 x_k); d/dv = sum of x where m.
  expect_values(out[0], {9, 4, 9, 9, 10, 9});
  expect_values(out[1], {1 + 3 + 4 + 6});

  // A constant mask from a comparison (bool inputs are not perturbed by the checker).
  Tensor y = sin(masked_fill(x, (x > 0.0) & (x < 0.5), v)) * x;
  auto r = testing::check_gradients(y.value(), {x.value(), v.value()},
                                    {testing::sample(x.type(), ir::Domain::any, 3), Array::scalar(f64, 0.7)}, 2, 1e-6, 4);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Masking, TheC99BackendAgreesWithTheInterpreter) {
  Graph g;
  Tensor x = g.input("x", f32, {2, 3, 3});
  Tensor m = g.input("m", boolean, {3});
  Tensor y = softmax(masked_fill(x, triu(ones_like(x, boolean), 1), -INFINITY), -1);
  auto [dx] = grad((tril(y, -1) * x).sum() + masked_fill(x, m, 2.0).sum(), {x});
  std::vector<Feed> feeds{{"x", testing::sample(x.type(), ir::Domain::any, 21)},
                          {"m", Array::from<bool>({3}, {false, true, false})}};
  auto a = compile(g, {y, dx}).run(feeds);
  auto b = compile(g, {y, dx}, Backend::c99).run(feeds);
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i) EXPECT_NEAR(a[k].at(i), b[k].at(i), 1e-6) << k << ": " << i;
}

// Causal self-attention weights: the mask and the -inf constant come from the scores
// tensor itself, so the module takes no Graph&.
struct CausalSoftmax {
  Tensor operator()(const Tensor& scores) const {
    Tensor future = triu(ones_like(scores, boolean), 1);  // j > i: not visible
    return softmax(masked_fill(scores, future, -INFINITY), -1);
  }
  template <class F> void for_each_parameter(F&&) {}
};

// Keeps the lower triangle and adds a learned-free constant made via graph_of.
struct LowerPlusEye {
  Tensor operator()(const Tensor& x) const {
    const std::int64_t n = x.shape().back();
    return tril(x) + graph_of(x).eye(n, n, x.dtype());
  }
  template <class F> void for_each_parameter(F&&) {}
};

TEST(MaskingModules, ComposeInsideSequential) {
  nn::Sequential model(nn::Linear(4, 4, true, f64), CausalSoftmax{}, LowerPlusEye{});
  Graph g;
  nn::bind(model, g, 3);
  Tensor x = g.input("x", f64, {4, 4});
  Tensor y = model(x);
  EXPECT_EQ(y.type(), (Type{f64, {4, 4}}));
  Array X = testing::sample(x.type(), ir::Domain::any, 11);
  auto out = nn::compile_with_parameters(g, {y}, model).run({{"x", X}});
  for (std::int64_t i = 0; i < 4; ++i) {
    double row = 0;
    for (std::int64_t j = 0; j < 4; ++j) {
      const double e = out[0].at({i, j});
      if (j > i) {
        EXPECT_EQ(e, 0) << i << "," << j;  // masked, then tril
      } else if (j < i) {
        EXPECT_GT(e, 0) << i << "," << j;
      }
      row += e;
    }
    EXPECT_NEAR(row, 2.0, 1e-12) << i;  // softmax row sums to 1, plus the eye
  }
  EXPECT_NEAR(out[0].at({0, 0}), 2.0, 1e-12);  // row 0 sees only itself

  Tensor loss = (y * y).sum();
  auto& lin = boost::hana::at_c<0>(model.layers);
  auto r = testing::check_gradients(loss.value(), {x.value(), lin.weight.tensor.value(), lin.bias.tensor.value()},
                                    {X, lin.weight.value(), lin.bias.value()}, 1, 1e-6, 12);
  EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace mg
