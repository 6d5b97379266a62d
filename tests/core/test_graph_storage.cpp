// Graph storage (ir/arena.hpp): nodes and operand lists never move while a graph grows,
// operand lists survive dead-code removal renumbered, and the containers construct and
// destroy exactly what they hold.
#include <gtest/gtest.h>

#include <set>

#include "minigrad/ir/arena.hpp"
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::ir {
namespace {

struct Counted {
  static inline int alive = 0;
  int value;
  explicit Counted(int v) : value(v) { ++alive; }
  Counted(Counted&& o) noexcept : value(o.value) { ++alive; }
  Counted& operator=(Counted&&) = default;
  ~Counted() { --alive; }
};

TEST(GraphStorage, StableVectorNeverMovesAndDestroysWhatItHolds) {
  {
    StableVector<Counted> v;
    std::vector<const Counted*> at;
    for (int i = 0; i < 5000; ++i) at.push_back(&v.push_back(Counted(i)));
    EXPECT_EQ(Counted::alive, 5000);
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(&v[static_cast<std::size_t>(i)], at[static_cast<std::size_t>(i)]) << i;  // never moved
      ASSERT_EQ(v[static_cast<std::size_t>(i)].value, i);
    }
    EXPECT_THROW(v.at(5000), std::out_of_range);
    v.truncate(17);
    EXPECT_EQ(v.size(), 17u);
    EXPECT_EQ(Counted::alive, 17);
    EXPECT_EQ(&v.push_back(Counted(-1)), at[17]);  // the slot is reused
    EXPECT_EQ(v[17].value, -1);
  }
  EXPECT_EQ(Counted::alive, 0);
}

TEST(GraphStorage, RunPoolRunsAreDisjointAndStable) {
  RunPool<NodeId> pool;
  std::vector<std::pair<NodeId*, std::size_t>> runs;
  for (std::size_t i = 0; i < 2000; ++i) {
    const std::size_t n = i % 7 == 0 ? 100 : i % 4;  // some runs longer than a fresh block
    NodeId* run = pool.allocate(n);
    for (std::size_t k = 0; k < n; ++k) run[k] = static_cast<NodeId>(i);
    runs.emplace_back(run, n);
  }
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t k = 0; k < runs[i].second; ++k) ASSERT_EQ(runs[i].first[k], i) << "run " << i << " overwritten";
  EXPECT_EQ(pool.allocate(0), nullptr);
}

TEST(GraphStorage, NodeReferencesAndOperandsSurviveGrowth) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2}});
  Value y = g.add_input("y", Type{f64, {2}});
  Value first = add(x, y);
  const Node& held = first.node();  // taken before the graph grows a thousandfold
  Value v = first;
  for (int i = 0; i < 20000; ++i) v = i % 2 ? mul(v, x) : add(y, v);
  EXPECT_EQ(&held, &g.node(first.id));
  ASSERT_EQ(held.inputs.size(), 2u);
  EXPECT_EQ(held.inputs[0], x.id);
  EXPECT_EQ(held.inputs[1], y.id);
  const Node& last = v.node();
  EXPECT_EQ(std::vector<NodeId>(last.inputs.begin(), last.inputs.end()), (std::vector<NodeId>{v.id - 1, x.id}));
  // A long operand list (more than any fixed buffer a caller might use) is kept whole.
  std::vector<Value> many;
  for (int i = 0; i < 40; ++i) many.push_back(i % 2 ? x : v);
  const Node& cat = concat(many, 0).node();
  ASSERT_EQ(cat.inputs.size(), 40u);
  for (std::size_t k = 0; k < 40; ++k) EXPECT_EQ(cat.inputs[k], k % 2 ? x.id : v.id);
  EXPECT_THROW(g.node(static_cast<NodeId>(g.size())), std::out_of_range);
}

TEST(GraphStorage, AppendRejectsAnOperandOfAnotherGraph) {
  Graph g, other;
  Value x = g.add_input("x", Type{f64, {2}});
  Value z = other.add_input("z", Type{f64, {2}});
  Node n;
  n.kind = NodeKind::op;
  n.op = &op("neg");
  n.type = Type{f64, {2}};
  const Value operands[] = {z};
  EXPECT_THROW(g.append(std::move(n), std::span<const Value>(operands)), std::logic_error);
  EXPECT_EQ(g.size(), 1u);
  (void)x;
}

TEST(GraphStorage, RetainLiveRenumbersOperandLists) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  Value dead = exp(x);
  Value a = neg(x);
  Value dead2 = tanh(dead);
  Value b = mul(a, x);
  Value c = add(b, a);
  g.outputs = {c.id};
  (void)dead2;
  g.retain_live();
  ASSERT_EQ(g.size(), 4u);  // x, neg, mul, add
  EXPECT_EQ(g.node(1).op_name(), "neg");
  EXPECT_EQ(std::vector<NodeId>(g.node(2).inputs.begin(), g.node(2).inputs.end()), (std::vector<NodeId>{1, 0}));
  EXPECT_EQ(std::vector<NodeId>(g.node(3).inputs.begin(), g.node(3).inputs.end()), (std::vector<NodeId>{2, 1}));
  EXPECT_EQ(g.outputs, (std::vector<NodeId>{3}));
  for (NodeId id = 0; id < g.size(); ++id) EXPECT_EQ(g.node(id).id, id);
  // The graph keeps growing normally after compaction.
  Value d = sub(g.value(3), g.value(0));
  EXPECT_EQ(d.id, 4u);
  EXPECT_EQ(std::vector<NodeId>(d.node().inputs.begin(), d.node().inputs.end()), (std::vector<NodeId>{3, 0}));
}

// Inputs are found by a scan while a graph has few (region bodies) and by a map from the
// eighth on: both ways find every input, reject a duplicate, and follow renumbering.
TEST(GraphStorage, InputsAreFoundByNameBelowAndAboveTheScanLimit) {
  for (int count : {1, 7, 8, 9, 20}) {
    Graph g;
    std::vector<NodeId> ids;
    Value first;
    for (int i = 0; i < count; ++i) {
      Value in = g.add_input("in" + std::to_string(i), Type{f64, {2}});
      if (i == 0) first = in;
      ids.push_back(in.id);
      (void)exp(in);  // a dead node between inputs: retain_live renumbers the later ones
    }
    for (int i = 0; i < count; ++i) EXPECT_EQ(g.input("in" + std::to_string(i)).id, ids[static_cast<std::size_t>(i)]) << count;
    EXPECT_FALSE(g.input("in" + std::to_string(count)).valid()) << count;
    EXPECT_FALSE(g.input("in").valid()) << count;
    EXPECT_THROW(g.add_input("in" + std::to_string(count - 1), Type{f64, {2}}), UserError) << count;
    g.outputs = {neg(first).id};
    g.retain_live();
    for (int i = 0; i < count; ++i) {
      const Value v = g.input("in" + std::to_string(i));
      ASSERT_TRUE(v.valid()) << count << " " << i;
      EXPECT_EQ(v.node().name, "in" + std::to_string(i)) << count;
      EXPECT_EQ(v.id, g.inputs()[static_cast<std::size_t>(i)]) << count;
    }
    // Growing past the limit after renumbering still finds every input.
    Value late = g.add_input("late", Type{f64, {2}});
    EXPECT_EQ(g.input("late").id, late.id);
    EXPECT_EQ(g.input("in0").id, g.inputs()[0]);
  }
}

}  // namespace
}  // namespace mg::ir
