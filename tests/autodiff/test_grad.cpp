// The grad pass: known gradients, broadcasting, grad of grad, Hessians, vjp, stop_gradient,
// and the errors a user can hit (integer wrt, non-scalar output, an op without a derivative).
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>

#include "tests/values.hpp"

#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

using testing::expect_values;
using testing::vec;

TEST(Grad, SumOfSquaresIsTwoX) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto [dx] = grad((x * x).sum(), {x});
  auto out = compile(g, {dx}).run({{"x", vec({3}, {1, -2, 0.5})}});
  expect_values(out[0], {2, -4, 1});
}

TEST(Grad, BroadcastingSumsOverExpandedAxes) {
  Graph g;
  Tensor a = g.input("a", f64, {2, 1});
  Tensor b = g.input("b", f64, {3});
  auto [da, db] = grad((a * b).sum(), {a, b});
  EXPECT_EQ(da.shape(), (Shape{2, 1}));
  EXPECT_EQ(db.shape(), (Shape{3}));
  auto out = compile(g, {da, db}).run({{"a", vec({2, 1}, {1, 2})}, {"b", vec({3}, {1, 10, 100})}});
  expect_values(out[0], {111, 111});  // d/da_i sum_j a_i b_j = sum_j b_j
  expect_values(out[1], {3, 3, 3});   // sum_i a_i
}

TEST(Grad, TheReadmeSnippetMatchesFiniteDifferences) {
  Graph g;
  Tensor x = g.input("x", f64, {3, 4});
  Tensor w = g.input("w", f64, {4, 2});
  Tensor y = (relu(matmul(x, w) + 1.0) * 2.0).sum();
  auto [dw] = grad(y, {w});
  Tensor z = (dw * dw).sum();
  std::vector<ir::Value> inputs{x.value(), w.value()};
  std::vector<Array> values{testing::sample(x.type(), ir::Domain::any, 1), testing::sample(w.type(), ir::Domain::any, 2)};
  auto r1 = testing::check_gradients(y.value(), inputs, values, 2, 1e-6, 3);
  EXPECT_TRUE(r1.ok) << r1.report;
  auto r2 = testing::check_gradients(z.value(), inputs, values, 1, 1e-6, 4);  // third order overall
  EXPECT_TRUE(r2.ok) << r2.report;
}

TEST(Grad, GradOfGradOfCubic) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  Tensor y = x * x * x;
  auto [d1] = grad(y, {x});
  auto [d2] = grad(d1, {x});
  auto [d3] = grad(d2, {x});
  auto out = compile(g, {d1, d2, d3}).run({{"x", Array::scalar(f64, 2.0)}});
  EXPECT_DOUBLE_EQ(out[0].at(0), 12.0);  // 3x^2
  EXPECT_DOUBLE_EQ(out[1].at(0), 12.0);  // 6x
  EXPECT_DOUBLE_EQ(out[2].at(0), 6.0);
}

TEST(Hessian, QuadraticFormIsSymmetrisedMatrix) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor A = g.constant(vec({3, 3}, {1, 2, 0, 0, 3, 4, 5, 0, 6}));
  Tensor y = (x * matmul(A, x)).sum();  // x^T A x
  Tensor H = hessian(y, x);
  EXPECT_EQ(H.shape(), (Shape{3, 3}));
  auto out = compile(g, {H}).run({{"x", vec({3}, {0.3, -1, 2})}});
  expect_values(out[0], {2, 2, 5, 2, 6, 4, 5, 4, 12});  // A + A^T
}

TEST(Hessian, OfSumOfCubesIsDiagonal) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 2});
  Tensor H = hessian((x * x * x).sum(), x);
  EXPECT_EQ(H.shape(), (Shape{2, 2, 2, 2}));
  auto out = compile(g, {H}).run({{"x", vec({2, 2}, {1, 2, 3, 4})}});
  std::vector<double> want(16, 0.0);
  for (int i = 0; i < 4; ++i) want[i * 5] = 6.0 * (i + 1);
  expect_values(out[0], want);
}

TEST(Vjp, NonScalarOutputWithCotangent) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y = x * x;
  Tensor u = g.constant(vec({3}, {1, 10, 100}));
  auto dx = vjp({y}, {u}, {x});
  auto out = compile(g, {dx[0]}).run({{"x", vec({3}, {1, 2, 3})}});
  expect_values(out[0], {2, 40, 600});
}

TEST(Grad, DoesNotFlowThroughComparisonsOrIndices) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  Tensor mask = cast(x > 0.0, f64);
  Tensor idx = cast(argmax(x, 0), f64);
  auto [dx] = grad((x * mask).sum() + idx * 0.0, {x});
  auto out = compile(g, {dx}).run({{"x", vec({4}, {-1, 2, -3, 4})}});
  expect_values(out[0], {0, 1, 0, 1});
}

TEST(Grad, IndependentWrtGetsZerosAndRepeatedUseAccumulates) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  Tensor unused = g.input("unused", f64, {2});
  Tensor y = (x + x + x).sum();
  auto [dx, du] = grad(y, {x, unused});
  auto out = compile(g, {dx, du}).run({{"x", vec({2}, {1, 2})}});
  expect_values(out[0], {3, 3});
  expect_values(out[1], {0, 0});
}

TEST(Grad, AdjointNodesAreMarkedAndCarryTheForwardLine) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  const int line = __LINE__ + 1;
  Tensor y = exp(x).sum();
  auto [dx] = grad(y, {x});
  const ir::Node& n = dx.value().node();
  EXPECT_EQ(n.role, ir::Role::adjoint);
  EXPECT_EQ(n.loc.line, static_cast<std::uint32_t>(line));
}

TEST(GradErrors, IntegerWrtNamesTheInputAndLine) {
  Graph g;
  Tensor i = g.input("counts", i64, {3});
  Tensor y = cast(i, f64).sum();
  const int line = __LINE__ + 2;
  try {
    grad(y, {i});
    FAIL() << "expected GradError";
  } catch (const GradError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("counts"), std::string::npos) << m;
    EXPECT_NE(m.find("test_grad.cpp:" + std::to_string(line)), std::string::npos) << m;
  }
}

TEST(GradErrors, NonScalarOutput) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  EXPECT_THROW(grad(exp(x), {x}), GradError);
}

TEST(GradErrors, OpWithoutDerivativeIsNamed) {
  // A test-only op with a float output and no VJP rule.
  static const ir::OpDef& opaque = [] () -> const ir::OpDef& {
    ir::op("exp");  // make sure the registry is initialised first
    ir::OpDef& d = ir::define_op("test_opaque_floor");
    d.doc = "floor, deliberately without a VJP (test only)";
    d.traits.elementwise = true;
    d.infer = [](std::span<const Type> in, const Attrs&) { return in[0]; };
    d.kernel = [](const ir::KernelArgs& k) {
      for (std::int64_t i = 0; i < k.out.numel(); ++i) k.out.set(i, std::floor(k.in[0]->at(i)));
    };
    d.not_differentiable = "piecewise constant";
    return d;
  }();
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y;
  const int line = __LINE__ + 1;
  LocScope at(SourceLoc::from(std::source_location::current()));
  {
    y = Tensor(ir::make_op(opaque, {Tensor(x * 2.0).value()}));
  }
  Tensor loss = (y * x).sum();
  try {
    grad(loss, {x});
    FAIL() << "expected GradError";
  } catch (const GradError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("test_opaque_floor"), std::string::npos) << m;
    EXPECT_NE(m.find("piecewise constant"), std::string::npos) << m;
    EXPECT_NE(m.find(":" + std::to_string(line)), std::string::npos) << m;
  }
}

// stop_gradient (x.detach()): identity forward, no gradient back. d/dx of x * sg(x) is
// sg(x) = x, not 2x; the registry's gradient check cannot see this (vjp_not_derivative).
TEST(StopGradient, ProductRuleSeesOnlyTheLivePath) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y = (x * stop_gradient(x)).sum();
  auto [dx] = grad(y, {x});
  auto [dx_detach] = grad((x * x.detach()).sum(), {x});
  auto [dx_full] = grad((x * x).sum(), {x});
  const Array X = vec({3}, {1.5, -2, 0.25});
  auto out = compile(g, {y, dx, dx_detach, dx_full}).run({{"x", X}});
  expect_values(out[0], {1.5 * 1.5 + 4 + 0.0625});
  expect_values(out[1], {1.5, -2, 0.25});  // stop_gradient(x)'s value
  expect_values(out[2], {1.5, -2, 0.25});
  expect_values(out[3], {3, -4, 0.5});     // without it: 2x
}

TEST(StopGradient, OnlyPathGivesZerosAndExpressionsDetach) {
  Graph g;
  Tensor x = g.input("x", f64, {2});
  Tensor w = g.input("w", f64, {2});
  // The detached expression is one value: exp(x * w) through the gradient of w only.
  auto [dx, dw] = grad((stop_gradient(x * 3.0) * w + (exp(x * w)).detach()).sum(), {x, w});
  auto out = compile(g, {dx, dw}).run({{"x", vec({2}, {0.5, -1})}, {"w", vec({2}, {2, 4})}});
  expect_values(out[0], {0, 0});
  expect_values(out[1], {1.5, -3});
}

TEST(StopGradient, GradOfGradAndVjp) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  // y = sum(x^2 sg(x)); dy/dx = 2 x sg(x); d/dx sum(dy/dx) = 2 sg(x) = 2x (not 6x).
  Tensor y = (x * x * stop_gradient(x)).sum();
  auto [dx] = grad(y, {x});
  auto [ddx] = grad(dx.sum(), {x});
  // The second-order pass differentiates adjoint nodes through stop_gradient too.
  auto [dsg] = grad(stop_gradient(dx).sum(), {x});
  std::vector<Tensor> cot{g.input("c", f64, {3})};
  std::vector<Tensor> v = vjp({stop_gradient(x * 2.0)}, cot, {x});
  auto out = compile(g, {dx, ddx, dsg, v[0]}).run({{"x", vec({3}, {1, -2, 3})}, {"c", vec({3}, {1, 1, 1})}});
  expect_values(out[0], {2, 8, 18});
  expect_values(out[1], {2, -4, 6});
  expect_values(out[2], {0, 0, 0});
  expect_values(out[3], {0, 0, 0});
}

TEST(StopGradient, C99AgreesWithTheInterpreter) {
  Graph g;
  Tensor x = g.input("x", f32, {2, 3});
  Tensor b = g.input("b", boolean, {3});
  Tensor y = (tanh(x) * stop_gradient(x * x + 1.0)).sum();
  auto [dx] = grad(y, {x});
  std::vector<Tensor> outs{y, dx, stop_gradient(b), stop_gradient(x.cast(i64))};
  const Array X = vec({2, 3}, {0.5, -1, 2, 0.25, -0.75, 1.5}).cast(f32);
  Array B(Type{boolean, {3}});
  for (int i = 0; i < 3; ++i) B.set(i, i % 2);
  auto a = compile(g, outs).run({{"x", X}, {"b", B}});
  auto c = compile(g, outs, Backend::c99).run({{"x", X}, {"b", B}});
  ASSERT_EQ(a.size(), c.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].type(), c[i].type()) << i;
    for (std::int64_t k = 0; k < a[i].numel(); ++k) EXPECT_EQ(a[i].at(k), c[i].at(k)) << i << " at " << k;
  }
}

// After grad, stop_gradient is an elementwise copy: the optimizer pipeline fuses it into
// its chain; the interpreter gives the same bits, C99 agrees to 1e-12 (libm's exp, as the
// c99 suite allows).
TEST(StopGradient, OptimizedAndFusedGivesTheSameBits) {
  Graph g;
  Tensor x = g.input("x", f64, {4, 3});
  Tensor y = (exp(x) * stop_gradient(tanh(x) + 1.0) * 0.5).sum();
  auto [dx] = grad(y, {x});
  g.ir().outputs = {y.value().id, dx.value().id};
  auto opt = passes::run_pipeline(g.ir(), passes::kDefaultPipeline);
  const std::string text = ir::to_text(*opt.graph);
  EXPECT_NE(text.find("      %4 = stop_gradient(%3)"), std::string::npos) << "in a fused region:\n" << text;
  Array X(Type{f64, {4, 3}});
  for (std::int64_t i = 0; i < X.numel(); ++i) X.set(i, 0.1 * double(i) - 0.5);
  auto want = rt::compile(g.ir(), g.ir().outputs).run({{"x", X}});
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto got = rt::compile(*opt.graph, opt.graph->outputs, {}, b).run({{"x", X}});
    for (std::size_t k = 0; k < want.size(); ++k)
      for (std::int64_t i = 0; i < want[k].numel(); ++i) {
        if (b == Backend::interpreter)
          EXPECT_EQ(got[k].at(i), want[k].at(i)) << k << " " << i;
        else
          EXPECT_NEAR(got[k].at(i), want[k].at(i), 1e-12 * std::fabs(want[k].at(i))) << "c99 " << k << " " << i;
      }
  }
  for (std::int64_t i = 0; i < X.numel(); ++i)  // d/dx = 0.5 e^x (tanh x + 1)
    EXPECT_NEAR(want[1].at(i), 0.5 * std::exp(X.at(i)) * (std::tanh(X.at(i)) + 1), 1e-12);
}

TEST(StopGradient, TextIrRoundTrips) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y = (x * x.detach()).sum();
  auto [dx] = grad(y, {x});
  g.ir().outputs = {y.value().id, dx.value().id};
  const std::string text = ir::to_text(g.ir());
  EXPECT_NE(text.find("= stop_gradient(%x) : f64[3]"), std::string::npos) << text;
  auto parsed = ir::parse(text, "sg.mgir");
  EXPECT_EQ(ir::to_text(*parsed), text);
  // The parsed graph differentiates the same way: grad of its loss is x again.
  std::vector<ir::Value> wrt{parsed->input("x")};
  auto d = passes::grad(parsed->value(parsed->outputs[0]), wrt);
  const Array X = vec({3}, {1, -2, 4});
  auto r = rt::evaluate(std::vector<ir::Value>{d[0]}, {{"x", X}});
  expect_values(r[0], {1, -2, 4});
}

}  // namespace
}  // namespace mg
