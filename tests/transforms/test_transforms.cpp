// The transformations through the DSL (issue 15): jacrev / jacfwd / hessian, compositions in
// every order (grad of vmap, vmap of grad, jvp of grad, vmap of vmap), in_axes / out_axes,
// transforms over fused regions, each on the interpreter, the C99 backend and after the
// optimizing pass pipeline; and the errors bad input gets.
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/minigrad.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "minigrad/passes/jvp.hpp"
#include "minigrad/passes/vmap.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/transforms/run_everywhere.hpp"

namespace mg {
namespace {

using testing::run_everywhere;

void expect_near(const Array& got, const Array& want, double tol, const std::string& what) {
  ASSERT_EQ(to_string(got.type()), to_string(want.type())) << what;
  for (std::int64_t i = 0; i < got.numel(); ++i)
    EXPECT_NEAR(got.at(i), want.at(i), tol * (1 + std::fabs(want.at(i)))) << what << " [" << i << "]";
}

Array randn(Shape s, std::uint64_t seed) { return testing::sample(Type{f64, std::move(s)}, ir::Domain::any, seed); }

// ---- Jacobians --------------------------------------------------------------------------

TEST(Jacobian, RevAndFwdEqualTheAnalyticJacobian) {  // y = tanh(W x): J = diag(1 - y^2) W
  Graph g;
  Tensor W = g.input("W", f64, {3, 4});
  Tensor x = g.input("x", f64, {4});
  Tensor y = tanh(matmul(W, x.reshape({4, 1}))).reshape({3});
  Tensor jr = jacrev(y, x), jf = jacfwd(y, x), jw = jacrev(y, W);
  rt::Bindings b{{"W", randn({3, 4}, 1)}, {"x", randn({4}, 2)}};
  auto r = run_everywhere(g, {jr, jf, jw, y}, b);
  ASSERT_EQ(to_string(r[0].type()), "f64[3,4]");
  ASSERT_EQ(to_string(r[2].type()), "f64[3,3,4]");
  for (std::int64_t i = 0; i < 3; ++i) {
    const double d = 1 - r[3].at(i) * r[3].at(i);
    for (std::int64_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(r[0].at(i * 4 + j), d * b["W"].at(i * 4 + j), 1e-14);
      EXPECT_NEAR(r[1].at(i * 4 + j), d * b["W"].at(i * 4 + j), 1e-14);
      for (std::int64_t k = 0; k < 3; ++k)  // dy_i/dW_kj = [i == k] d_i x_j
        EXPECT_NEAR(r[2].at((i * 3 + k) * 4 + j), i == k ? d * b["x"].at(j) : 0.0, 1e-14);
    }
  }
}

TEST(Jacobian, HessianIsJacfwdOfGrad) {  // y = sum(x^3) + x0 x1: H = diag(6x) + offdiag
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y = (x * x * x).sum() + (x.reshape({3, 1}) * x.reshape({1, 3})).sum();
  Tensor h = hessian(y, x);
  Array xv = randn({3}, 5);
  auto r = run_everywhere(g, {h}, {{"x", xv}});
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_NEAR(r[0].at(i * 3 + j), (i == j ? 6 * xv.at(i) + 2 : 2), 1e-12);
  // One batched forward-over-reverse pass: the graph does not grow with x's size.
  Graph g2;
  Tensor x2 = g2.input("x", f64, {64});
  std::size_t before = g2.ir().size();
  hessian((x2 * x2 * x2).sum(), x2);
  EXPECT_LT(g2.ir().size() - before, 60u);
}

// ---- compositions -------------------------------------------------------------------------

TEST(Compose, GradOfVmap) {  // d/dW sum_b f(x_b) from the batched graph = the batched formula
  Graph g;
  Tensor W = g.input("W", f64, {3, 4});
  Tensor X = g.input("X", f64, {5, 4});
  auto f = vmap([&](const Tensor& x) { return tanh(matmul(W, x.reshape({4, 1}))).sum(); });
  Tensor ys = f(X);
  auto [gw] = grad(ys.sum(), {W});
  auto [gw_ref] = grad(tanh(matmul(X, W.T())).sum(), {W});
  auto r = run_everywhere(g, {gw, gw_ref, ys}, {{"W", randn({3, 4}, 1)}, {"X", randn({5, 4}, 2)}});
  expect_near(r[0], r[1], 1e-13, "grad(vmap f)");
  EXPECT_EQ(to_string(r[2].type()), "f64[5]");
}

TEST(Compose, JvpOfGradIsAHessianVectorProduct) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  Tensor v = g.input("v", f64, {4});
  Tensor y = (sin(x) * x).sum() + (x * x).sum() * x.sum();
  auto [gx] = grad(y, {x});
  Tensor hv = jvp({gx}, {x}, {v})[0];
  Tensor hv_ref = matmul(hessian(y, x), v.reshape({4, 1})).reshape({4});
  auto r = run_everywhere(g, {hv, hv_ref}, {{"x", randn({4}, 3)}, {"v", randn({4}, 4)}});
  expect_near(r[0], r[1], 1e-12, "jvp(grad f)");
}

TEST(Compose, VmapOfVmapAndAxes) {
  Graph g;
  Tensor X = g.input("X", f64, {3, 2, 4});
  auto f = [](const Tensor& x) { return x * x.sum() + exp(x); };  // x: [4]
  // Outer batch over axis 0, inner over axis 0 of what remains: X[i, j] -> f(X[i, j]).
  Tensor y = vmap(vmap(f))(X);
  // in_axes = 1 (and -1 for the out axis): X[:, j, :] batched along axis 1.
  Tensor z = vmap(std::function<Tensor(const Tensor&)>([&](const Tensor& x) { return vmap(f)(x); }), 1, -1)(X);
  Array xv = randn({3, 2, 4}, 6);
  auto r = run_everywhere(g, {y, z}, {{"X", xv}});
  ASSERT_EQ(to_string(r[0].type()), "f64[3,2,4]");
  ASSERT_EQ(to_string(r[1].type()), "f64[3,4,2]");
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < 4; ++k) s += xv.at((i * 2 + j) * 4 + k);
      for (std::int64_t k = 0; k < 4; ++k) {
        const double xk = xv.at((i * 2 + j) * 4 + k);
        EXPECT_NEAR(r[0].at((i * 2 + j) * 4 + k), xk * s + std::exp(xk), 1e-13);
        // z[i', k, j']: outer over axis 1 of X (j), inner over axis 0 of X[:, j] (i), out at -1.
        EXPECT_NEAR(r[1].at((i * 4 + k) * 2 + j), xk * s + std::exp(xk), 1e-13);
      }
    }
}

TEST(Compose, UnbatchedArgumentsAndOutputs) {
  Graph g;
  Tensor X = g.input("X", f64, {5, 3});
  Tensor w = g.input("w", f64, {3});
  auto f = vmap(
      [](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{(a[0] * a[1]).sum(), a[1] * 2.0};
      },
      {0, none}, {0, none});
  auto out = f({X, w});
  Array xv = randn({5, 3}, 7), wv = randn({3}, 8);
  auto r = run_everywhere(g, out, {{"X", xv}, {"w", wv}});
  ASSERT_EQ(to_string(r[0].type()), "f64[5]");
  ASSERT_EQ(to_string(r[1].type()), "f64[3]");
  for (std::int64_t b = 0; b < 5; ++b) {
    double s = 0;
    for (std::int64_t k = 0; k < 3; ++k) s += xv.at(b * 3 + k) * wv.at(k);
    EXPECT_NEAR(r[0].at(b), s, 1e-14);
  }
}

// A graph after fusion holds `fused` regions; vmap and jvp transform the region.
TEST(Compose, TransformsOverFusedRegions) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {6}});
  ir::Value y = ir::mul(ir::tanh(ir::add(x, ir::full_like(x, 0.5))), ir::exp(x));
  g.outputs = {y.id};
  auto fused = passes::run_pipeline(g, "fold,cse,fuse,dce").graph;
  ir::Graph& f = *fused;
  ASSERT_EQ(f.node(f.outputs[0]).op_name(), "fused");
  ir::Value fx = f.value(f.inputs()[0]), fy = f.value(f.outputs[0]);
  ir::Value xs = f.add_input("xs", Type{f64, {4, 6}});
  const passes::BatchAxis zero = 0;
  ir::Value ys = passes::vmap(std::span(&fy, 1), std::span(&fx, 1), std::span(&xs, 1), std::span(&zero, 1),
                              std::span(&zero, 1))[0];
  ir::Value v = f.add_input("v", Type{f64, {6}});
  ir::Value jv = passes::jvp(std::span(&fy, 1), std::span(&fx, 1), std::span(&v, 1))[0];
  Array xsv = randn({4, 6}, 9), vv = randn({6}, 10);
  Array x0(Type{f64, {6}});
  for (int i = 0; i < 6; ++i) x0.set(i, xsv.at(i));
  auto r = rt::evaluate(std::vector<ir::Value>{ys, jv}, {{"xs", xsv}, {"x", x0}, {"v", vv}});
  for (std::int64_t b = 0; b < 4; ++b)
    for (std::int64_t i = 0; i < 6; ++i) {
      const double xi = xsv.at(b * 6 + i);
      EXPECT_NEAR(r[0].at(b * 6 + i), std::tanh(xi + 0.5) * std::exp(xi), 1e-14);
    }
  for (std::int64_t i = 0; i < 6; ++i) {
    const double xi = x0.at(i), t = std::tanh(xi + 0.5);
    EXPECT_NEAR(r[1].at(i), ((1 - t * t) * std::exp(xi) + t * std::exp(xi)) * vv.at(i), 1e-13);
  }
}

// ---- errors ------------------------------------------------------------------------------

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TransformErrors, MismatchedBatchSizesNameTheUsersLine) {
  Graph g;
  Tensor a = g.input("a", f64, {4, 3});
  Tensor b = g.input("b", f64, {5, 3});
  auto f = vmap([](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] + x[1]}; });
  const int line = __LINE__ + 1;
  std::string m = message_of([&] { f({a, b}); });
  EXPECT_NE(m.find("mismatched batch sizes"), std::string::npos) << m;
  EXPECT_NE(m.find("has 4"), std::string::npos) << m;
  EXPECT_NE(m.find("has 5"), std::string::npos) << m;
  EXPECT_NE(m.find("test_transforms.cpp:" + std::to_string(line)), std::string::npos) << m;
}

TEST(TransformErrors, InAxesOutOfRange) {
  Graph g;
  Tensor a = g.input("a", f64, {4, 3});
  auto f = vmap([](const Tensor& x) { return x * 2.0; }, 2);
  const int line = __LINE__ + 1;
  std::string m = message_of([&] { f(a); });
  EXPECT_NE(m.find("in_axes[0] = 2 is out of range"), std::string::npos) << m;
  EXPECT_NE(m.find("test_transforms.cpp:" + std::to_string(line)), std::string::npos) << m;
  // The value-level form, and out_axes.
  Tensor x = g.input("x", f64, {3});
  Tensor y = x * 2.0;
  m = message_of([&] { vmap({y}, {x}, {a}, {-3}); });
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  m = message_of([&] { vmap({y}, {x}, {a}, {0}, {2}); });
  EXPECT_NE(m.find("out_axes 2 is out of range"), std::string::npos) << m;
  m = message_of([&] { vmap({y}, {x}, {a}, {1}); });  // [4, 3] with the batch at 1 is [4] per example
  EXPECT_NE(m.find("needs the batch axis"), std::string::npos) << m;
}

TEST(TransformErrors, AnOpWithoutARuleNamesTheOpAndItsLine) {
  // An op of this test's own, with a kernel and a VJP but neither transformation rule.
  ir::OpDef& d = ir::define_op("test_no_rules");
  d.doc = "x (test op without jvp / batch rules)";
  d.infer = [](std::span<const Type> in, const Attrs&) { return in[0]; };
  d.kernel = ir::op("neg").kernel;
  d.vjp = [](const ir::VjpArgs& a) { return std::vector<ir::Value>{a.cotangent}; };
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor X = g.input("X", f64, {2, 3});
  int line = 0;
  Tensor y;
  {
    line = __LINE__ + 1;
    LocScope at(SourceLoc::from(std::source_location::current()));
    y = Tensor(ir::make_op(ir::op("test_no_rules"), {x.value()}));
  }
  std::string m = message_of([&] { vmap({y}, {x}, {X}); });
  EXPECT_NE(m.find("op 'test_no_rules' has no batching rule"), std::string::npos) << m;
  EXPECT_NE(m.find("never falls back"), std::string::npos) << m;
  EXPECT_NE(m.find("test_transforms.cpp:" + std::to_string(line)), std::string::npos) << m;
  m = message_of([&] { jvp({y}, {x}, {x}); });
  EXPECT_NE(m.find("'test_no_rules'"), std::string::npos) << m;
  EXPECT_NE(m.find("no JVP rule"), std::string::npos) << m;
  EXPECT_NE(m.find("test_transforms.cpp:" + std::to_string(line)), std::string::npos) << m;
}

}  // namespace
}  // namespace mg
