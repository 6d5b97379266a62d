// The order steps run in (runtime/step_order.hpp): node-id order, except that an
// optimizer update (ir::Role::update) runs right after the last gradient node it reads,
// so the gradient's buffer dies at once; an update that reads only inputs runs just
// before its first reader, one nothing reads runs last. Exact planned peaks, both ways.
#include <gtest/gtest.h>

#include <algorithm>

#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/memory_plan.hpp"
#include "minigrad/runtime/step_order.hpp"

namespace mg::rt {
namespace {

// Two "gradients" of [1000] f64 (8000 bytes each): g1 early, g2 after a chain a -> b;
// u1 = w - g1 and u2 = p2 - g2 are the updates (roots, not pooled), w = exp(p1) an update
// node reading only an input, s1 = -s one nothing reads. With `roles` false the same
// nodes are all forward nodes.
struct Step {
  ir::Graph g;
  ir::Value g1, a, b, g2, w, u1, u2, s1;
  explicit Step(bool roles) {
    const Type t{f64, {1000}};
    ir::Value x = g.add_input("x", t), p1 = g.add_input("p1", t), p2 = g.add_input("p2", t);
    ir::Value s = g.add_input("s", Type{f64, {}});
    g1 = ir::sin(x);
    a = ir::cos(x);
    b = ir::exp(a);
    g2 = ir::tanh(b);
    ir::RoleScope update(g, roles ? ir::Role::update : ir::Role::forward);
    w = ir::exp(p1);
    u1 = ir::sub(w, g1);
    u2 = ir::sub(p2, g2);
    s1 = ir::neg(s);
  }
  std::vector<ir::NodeId> roots() const { return {u1.id, u2.id, s1.id}; }
};

TEST(StepOrder, WithoutUpdateNodesItIsNodeIdOrder) {
  Step s(false);
  const std::vector<ir::NodeId> order = step_order(s.g, s.g.reachable_from(s.roots()));
  EXPECT_EQ(order, (std::vector<ir::NodeId>{s.g1.id, s.a.id, s.b.id, s.g2.id, s.w.id, s.u1.id, s.u2.id, s.s1.id}));
  // g1 waits for the end: g1, a and b are live together when b is placed.
  EXPECT_EQ(plan_memory(s.g, s.roots()).peak_live_bytes, 3u * 8000u);
}

TEST(StepOrder, AnUpdateRunsRightAfterItsGradient) {
  Step s(true);
  const std::vector<ir::NodeId> order = step_order(s.g, s.g.reachable_from(s.roots()));
  // w reads only p1: just before u1, its reader; s1 nothing reads: last.
  EXPECT_EQ(order, (std::vector<ir::NodeId>{s.g1.id, s.w.id, s.u1.id, s.a.id, s.b.id, s.g2.id, s.u2.id, s.s1.id}));
  const MemoryPlan p = plan_memory(s.g, s.roots());
  EXPECT_EQ(p.steps, order);
  EXPECT_EQ(p.peak_live_bytes, 2u * 8000u);  // g1 with w, then a with b: never three
}

TEST(StepOrder, TheResultsDoNotChange) {
  Step with(true), without(false);
  const Array x = Array::full(Type{f64, {1000}}, 0.3);
  const Array p = Array::full(Type{f64, {1000}}, -0.7);
  const Bindings in{{"x", x}, {"p1", p}, {"p2", p}, {"s", Array::scalar(f64, 2)}};
  std::vector<ir::Value> o1{with.u1, with.u2, with.s1}, o2{without.u1, without.u2, without.s1};
  const auto r1 = compile(o1).run(in), r2 = compile(o2).run(in);
  for (std::size_t k = 0; k < r1.size(); ++k)
    for (std::int64_t i = 0; i < r1[k].numel(); ++i) ASSERT_EQ(r1[k].at(i), r2[k].at(i)) << k << " " << i;
}

// Every step's operands run before it, whatever reads what (an update read by a forward
// node, chains of updates, updates of several gradients).
TEST(StepOrder, IsATopologicalOrder) {
  ir::Graph g;
  const Type t{f64, {4}};
  ir::Value x = g.add_input("x", t), lr = g.add_input("lr", Type{f64, {}});
  std::vector<ir::Value> roots, grads;
  ir::Value h = x;
  for (int i = 0; i < 6; ++i) {
    h = ir::tanh(ir::add(h, x));
    grads.push_back(ir::square(h));
  }
  ir::Value lr_b;
  {
    ir::RoleScope update(g, ir::Role::update);
    lr_b = ir::broadcast_to(ir::scale(lr, 0.5), {4});
    ir::Value prev = lr_b;
    for (ir::Value gr : grads) {
      prev = ir::sub(ir::mul(gr, lr_b), prev);  // each update also reads the previous one
      roots.push_back(prev);
    }
  }
  roots.push_back(ir::exp(ir::add(roots[2], x)));  // a forward node reading an update
  std::vector<ir::NodeId> ids;
  for (ir::Value r : roots) ids.push_back(r.id);
  const std::vector<bool> live = g.reachable_from(ids);
  const std::vector<ir::NodeId> order = step_order(g, live);
  std::vector<bool> done(g.size(), false);
  std::size_t ops = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    ops += live[id] && g.node(id).kind == ir::NodeKind::op;
    if (g.node(id).kind != ir::NodeKind::op) done[id] = true;
  }
  ASSERT_EQ(order.size(), ops);
  for (ir::NodeId id : order) {
    for (ir::NodeId in : g.node(id).inputs) EXPECT_TRUE(done[in]) << "node " << id << " runs before its operand " << in;
    EXPECT_FALSE(done[id]) << "node " << id << " twice";
    done[id] = true;
  }
}

}  // namespace
}  // namespace mg::rt
