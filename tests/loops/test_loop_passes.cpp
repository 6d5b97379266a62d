// The optimizer inside loop bodies (issue 14): fold, CSE, DCE and fuse work in a scan's
// body; loop-invariant nodes are hoisted out (nested loops from the inside out); every
// pipeline keeps the results (interpreter and C99).
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>

#include "minigrad/ir/control.hpp"
#include "minigrad/passes/dce.hpp"
#include "minigrad/passes/hoist.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

std::size_t count(const ir::Graph& g, std::string_view op, bool in_regions = true) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& node = g.node(id);
    if (node.kind == ir::NodeKind::op && node.op->name == op) ++n;
    if (in_regions)
      for (const auto& r : node.regions) n += count(*r, op);
  }
  return n;
}

const ir::Graph& body_of(const ir::Graph& g, std::string_view loop) {
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (g.node(id).kind == ir::NodeKind::op && g.node(id).op->name == loop) return *g.node(id).regions.back();
  ADD_FAILURE() << "no " << loop;
  return g;
}

std::vector<Array> run(const ir::Graph& g, const rt::Bindings& b, rt::Backend backend = rt::Backend::interpreter) {
  return rt::compile(g, g.outputs, {}, backend).run(b);
}

void expect_equal(const std::vector<Array>& a, const std::vector<Array>& b, double tol = 0) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i)
      ASSERT_NEAR(a[k].at(i), b[k].at(i), tol * (1 + std::abs(a[k].at(i)))) << "output " << k << " element " << i;
}

// A body with a duplicate and a dead value: cse and dce shrink it; the gradient's reverse
// body transposes the weight every step (matmul's VJP) until hoist moves that out; the
// whole pipeline fuses the bodies. Results unchanged, interpreter and C99.
TEST(LoopPasses, CseDceHoistAndFuseWorkInsideBodies) {
  Graph g;
  Tensor xs = g.input("xs", f64, {6, 2, 4});
  Tensor W = g.input("W", f64, {4, 4});
  auto [c, ys] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor a = tanh(matmul(h, W) + x), b = tanh(matmul(h, W) + x);  // a duplicate
    Tensor dead = sin(h);
    (void)dead;
    Tensor h2 = (a + b) * 0.5;
    return std::pair{h2, h2 * h2};
  }, g.zeros({2, 4}, f64), xs);
  Tensor loss = ys.sum() + c.sum();
  auto [dW] = grad(loss, {W});
  g.ir().outputs = {loss.value().id, dW.value().id};
  const rt::Bindings b{{"xs", testing::sample(xs.type(), ir::Domain::any, 1)}, {"W", testing::sample(W.type(), ir::Domain::unit, 2)}};
  const auto want = run(g.ir(), b);
  EXPECT_EQ(count(body_of(g.ir(), "scan"), "tanh"), 2u);

  auto cse = passes::run_pipeline(g.ir(), "cse,dce", {.verify = true}).graph;
  EXPECT_EQ(count(body_of(*cse, "scan"), "tanh"), 1u);
  EXPECT_EQ(count(body_of(*cse, "scan"), "sin"), 0u);
  expect_equal(want, run(*cse, b));

  const std::size_t permutes = count(*cse, "permute"), outside = count(*cse, "permute", false);
  EXPECT_GT(permutes, outside);  // some transpose runs inside a loop
  auto hoisted = passes::run_pipeline(*cse, "hoist,dce", {.verify = true}).graph;
  EXPECT_GT(count(*hoisted, "permute", false), outside);  // out of the loop: once per run
  EXPECT_LT(count(*hoisted, "permute") - count(*hoisted, "permute", false), permutes - outside);
  expect_equal(want, run(*hoisted, b));
  auto again = passes::hoist_loop_invariants(*hoisted);  // idempotent
  EXPECT_EQ(ir::to_text(*passes::eliminate_dead_code(*again)), ir::to_text(*hoisted));

  auto all = passes::run_pipeline(g.ir(), "fold,cse,hoist,fuse,dce", {.verify = true}).graph;
  EXPECT_GE(count(body_of(*all, "scan"), "fused"), 1u);  // a body fused on its own
  expect_equal(want, run(*all, b));
  expect_equal(want, run(*all, b, rt::Backend::c99), 1e-12);
}

// fold evaluates a loop whose operands are all constants.
TEST(LoopPasses, FoldEvaluatesALoopOnConstants) {
  Graph g;
  auto [c, ys] = scan([](const Tensors& c, const Tensors&) {
    return std::pair{Tensors{c[1], c[0] + c[1]}, Tensors{c[0]}};
  }, Tensors{g.scalar(0.0, f64), g.scalar(1.0, f64)}, Tensors{}, {.length = 10});
  g.ir().outputs = {c[0].value().id, ys[0].value().id};
  auto folded = passes::run_pipeline(g.ir(), "fold,dce").graph;
  EXPECT_EQ(count(*folded, "scan"), 0u);
  auto out = run(*folded, {});
  EXPECT_EQ(out[0].at(0), 55);
  EXPECT_EQ(out[1].at(9), 34);
}

// An invariant of an inner loop that depends only on the outer loop's invariants leaves
// both loops; one that depends on the outer carry stays in the outer body.
TEST(LoopPasses, HoistingNestedLoopsMovesInvariantsAsFarAsTheyGo) {
  Graph g;
  Tensor xs = g.input("xs", f64, {3, 5});
  Tensor w = g.input("w", f64, {});
  auto [c, ys] = scan([&](const Tensor& outer, const Tensor& row) {
    auto [s, inner] = scan([&](const Tensor& a, const Tensor& x) {
      Tensor a2 = tanh(a * exp(w) + x * cos(outer));  // exp(w): invariant in both; cos(outer): in the inner
      return std::pair{a2, a2};
    }, outer, row);
    return std::pair{s, inner.sum()};
  }, g.scalar(0.5, f64), xs);
  Tensor loss = c + ys.sum();
  g.ir().outputs = {loss.value().id};
  const rt::Bindings b{{"xs", testing::sample(xs.type(), ir::Domain::any, 3)}, {"w", Array::from_vector({}, std::vector<double>{0.3})}};
  const auto want = run(g.ir(), b);
  auto h = passes::run_pipeline(g.ir(), "hoist,dce", {.verify = true}).graph;
  EXPECT_EQ(count(*h, "exp", false), 1u);   // at top level
  EXPECT_EQ(count(*h, "exp"), 1u);          // and nowhere inside
  const ir::Graph& outer_body = body_of(*h, "scan");
  EXPECT_EQ(count(outer_body, "cos", false), 1u);  // left the inner loop, not the outer
  expect_equal(want, run(*h, b));
  expect_equal(want, run(*h, b, rt::Backend::c99), 1e-12);
}

TEST(LoopPasses, HoistingAWhileLoopsInvariants) {
  Graph g;
  Tensor x = g.input("x", f64, {});
  Tensor k = g.input("k", f64, {});
  Tensor r = while_loop([&](const Tensor& c) { return c < exp(k); }, [&](const Tensor& c) { return c * 1.5 + sqrt(k); }, x, 100);
  g.ir().outputs = {r.value().id};
  const rt::Bindings b{{"x", Array::from_vector({}, std::vector<double>{0.1})}, {"k", Array::from_vector({}, std::vector<double>{2.0})}};
  const auto want = run(g.ir(), b);
  auto h = passes::run_pipeline(g.ir(), "hoist,dce", {.verify = true}).graph;
  EXPECT_EQ(count(*h, "exp", false), 1u);
  EXPECT_EQ(count(*h, "sqrt", false), 1u);
  EXPECT_EQ(count(*h, "exp"), 1u);
  expect_equal(want, run(*h, b));
  expect_equal(want, run(*h, b, rt::Backend::c99));
}

}  // namespace
}  // namespace mg
