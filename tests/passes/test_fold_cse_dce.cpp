// fold_constants, eliminate_common_subexpressions, eliminate_dead_code (and, on the same
// corpus, fuse_elementwise and the whole default pipeline): every pass preserves results
// bit for bit on the registry's op test corpus and on random graphs, does what it says
// on small graphs (node counts), and is idempotent.
#include <gtest/gtest.h>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/cse.hpp"
#include "minigrad/passes/dce.hpp"
#include "minigrad/passes/fold.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/passes/pass_test_util.hpp"

namespace mg {
namespace {

using testing::expect_bit_equal;
using testing::run_outputs;
using Pass = std::function<std::unique_ptr<ir::Graph>(const ir::Graph&)>;

const std::vector<std::pair<std::string, Pass>>& all_passes() {
  static const std::vector<std::pair<std::string, Pass>> p = {
      {"fold", [](const ir::Graph& g) { return passes::fold_constants(g); }},
      {"cse", passes::eliminate_common_subexpressions},
      {"dce", passes::eliminate_dead_code},
      {"fuse", passes::fuse_elementwise},
      {"pipeline", [](const ir::Graph& g) { return passes::run_pipeline(g, passes::kDefaultPipeline).graph; }},
  };
  return p;
}

// The family default of tests/ops/test_registry_ops.cpp for elementwise ops.
std::vector<ir::OpTestCase> cases_of(const ir::OpDef& d) {
  if (!d.test.cases.empty() || !d.traits.elementwise) return d.test.cases;
  std::vector<ir::OpTestCase> out;
  for (Shape s : {Shape{3, 4}, Shape{}, Shape{2, 1, 3}})
    out.push_back({std::vector<Type>(static_cast<std::size_t>(d.arity), Type{f64, s}), {}});
  return out;
}

// Every op of the registry, on every test case, three ways: on inputs; on constants (so
// fold evaluates it); twice on the same inputs (so cse merges). Each pass must give the
// unoptimized graph's bits.
TEST(PassCorpus, EveryPassPreservesEveryOpsResults) {
  int graphs = 0;
  for (const ir::OpDef* d : ir::all_ops()) {
    if (d->name.rfind("test_", 0) == 0) continue;
    auto cases = cases_of(*d);
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      const ir::OpTestCase& c = cases[ci];
      std::vector<Array> values;
      for (std::size_t i = 0; i < c.inputs.size(); ++i)
        values.push_back(d->test.make_input ? d->test.make_input(i, c.inputs[i], 500 + i)
                                            : testing::sample(c.inputs[i], d->test.domain, 500 + i));
      for (int variant = 0; variant < 3; ++variant) {
        ir::Graph g;
        rt::Bindings b;
        std::vector<ir::Value> ins;
        for (std::size_t i = 0; i < c.inputs.size(); ++i) {
          if (variant == 1) {
            ins.push_back(g.add_constant(values[i]));
          } else {
            std::string name = "in" + std::to_string(i);
            ins.push_back(g.add_input(name, c.inputs[i]));
            b[name] = values[i];
          }
        }
        auto make = [&] {
          ir::Value v = ir::make_op(g, *d, ins, c.attrs);
          if (d->test.attach_regions) d->test.attach_regions(g, v.id);
          return v;
        };
        ir::Value out = make();
        g.outputs = {out.id};
        if (variant == 2) g.outputs.push_back(make().id);
        const std::string what = d->name + " case " + std::to_string(ci) + " variant " + std::to_string(variant);
        std::vector<Array> want = run_outputs(g, b);
        for (auto& [name, pass] : all_passes()) {
          std::unique_ptr<ir::Graph> h = pass(g);
          ASSERT_NO_THROW(ir::verify(*h)) << what << " after " << name;
          expect_bit_equal(want, run_outputs(*h, b), what + " after " + name);
        }
        if (variant == 1 && !d->traits.random && d->name != "fused") {
          auto h = passes::fold_constants(g);
          EXPECT_EQ(h->node(h->outputs[0]).kind, ir::NodeKind::constant) << what << ": fold did not fold an op on constants";
        }
        if (variant == 2 && !d->traits.random && !d->test.attach_regions) {
          auto h = passes::eliminate_common_subexpressions(g);
          EXPECT_EQ(h->outputs[0], h->outputs[1]) << what << ": cse did not merge the duplicate";
        }
        ++graphs;
      }
    }
  }
  EXPECT_GT(graphs, 200);
}

TEST(PassRandom, EveryPassPreservesResultsAndIsIdempotent) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    testing::RandomGraph r = testing::random_graph(seed);
    std::vector<Array> want = run_outputs(*r.g, r.inputs);
    for (auto& [name, pass] : all_passes()) {
      const std::string what = "seed " + std::to_string(seed) + " " + name;
      std::unique_ptr<ir::Graph> once = pass(*r.g);
      ASSERT_NO_THROW(ir::verify(*once)) << what;
      expect_bit_equal(want, run_outputs(*once, r.inputs), what);
      std::unique_ptr<ir::Graph> twice = pass(*once);
      EXPECT_EQ(ir::to_text(*twice), ir::to_text(*once)) << what << " is not idempotent";
    }
  }
}

TEST(Fold, EvaluatesConstantSubgraphsOnly) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value c = g.add_constant(Array::from<double>({3}, {0.5, 1, 2}));
  ir::Value e = ir::exp(ir::add_scalar(c, 1.0));  // full, add, exp: all constant
  ir::Value y = ir::mul(x, e);
  g.outputs = {y.id};
  auto h = passes::fold_constants(g);
  const ir::Node& mul = h->node(h->outputs[0]);
  EXPECT_EQ(mul.op_name(), "mul");
  const ir::Node& folded = h->node(mul.inputs[1]);
  ASSERT_EQ(folded.kind, ir::NodeKind::constant);
  EXPECT_EQ(folded.literal->at(2), std::exp(3.0));
  auto live = passes::eliminate_dead_code(*h);
  EXPECT_EQ(live->size(), 3u) << ir::to_text(*live);  // x, the folded constant, mul
}

TEST(Fold, SkipsRandomOpsAndHugeResults) {
  ir::Graph g;
  ir::Value r = ir::make_op(g, ir::op("random_normal"), {}, {{"shape", I64List{4}}, {"seed", std::int64_t{7}}});
  ir::Value big = ir::full(g, Type{f32, {1 << 17}}, 2.0);
  ir::Value small = ir::full(g, Type{f32, {4}}, 2.0);
  g.outputs = {r.id, big.id, small.id};
  auto h = passes::fold_constants(g);
  EXPECT_EQ(h->node(h->outputs[0]).op_name(), "random_normal");
  EXPECT_EQ(h->node(h->outputs[1]).op_name(), "full");
  EXPECT_EQ(h->node(h->outputs[2]).kind, ir::NodeKind::constant);
  auto capped = passes::fold_constants(g, {.max_elements = 1 << 17});
  EXPECT_EQ(capped->node(capped->outputs[1]).kind, ir::NodeKind::constant);
}

TEST(Fold, FoldsHugeResultsNoLargerThanAnOperand) {
  // A frozen weight's transpose is computed once however big; growing it is not.
  ir::Graph g;
  ir::Value w = g.add_constant(Array::full(Type{f32, {512, 256}}, 1.0));
  ir::Value wt = ir::permute(w, {1, 0});
  ir::Value grown = ir::broadcast_to(w, {2, 512, 256});
  g.outputs = {wt.id, grown.id};
  auto h = passes::fold_constants(g);
  EXPECT_EQ(h->node(h->outputs[0]).kind, ir::NodeKind::constant);
  EXPECT_EQ(h->node(h->outputs[1]).op_name(), "broadcast_to");
}

TEST(Fold, LeavesKernelErrorsToTheRun) {
  ir::Graph g;
  ir::Value x = g.add_constant(Array::from<double>({3}, {1, 2, 3}));
  ir::Value idx = g.add_constant(Array::from<std::int64_t>({1}, {7}));  // out of range
  ir::Value y = ir::index_select(x, idx, 0);
  g.outputs = {y.id};
  auto h = passes::fold_constants(g);
  EXPECT_EQ(h->node(h->outputs[0]).op_name(), "index_select");
  EXPECT_THROW(run_outputs(*h, {}), UserError);
}

TEST(Cse, MergesEqualNodesAndConstantsButNotRandomOrSignedZeros) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value y = g.add_input("y", Type{f64, {2}});
  ir::Value a1 = ir::add(x, y), a2 = ir::add(x, y), a3 = ir::add(y, x);
  ir::Value c1 = g.add_constant(Array::from<double>({2}, {0.0, 1.0}));
  ir::Value c2 = g.add_constant(Array::from<double>({2}, {0.0, 1.0}));
  ir::Value c3 = g.add_constant(Array::from<double>({2}, {-0.0, 1.0}));
  ir::Value r1 = ir::make_op(g, ir::op("random_uniform"), {}, {{"shape", I64List{2}}, {"dtype", f64}, {"seed", std::int64_t{1}}});
  ir::Value r2 = ir::make_op(g, ir::op("random_uniform"), {}, {{"shape", I64List{2}}, {"dtype", f64}, {"seed", std::int64_t{1}}});
  ir::Value l1 = ir::unary("leaky_relu", x, {{"alpha", 0.0}}), l2 = ir::unary("leaky_relu", x, {{"alpha", -0.0}});
  g.outputs = {a1.id, a2.id, a3.id, c1.id, c2.id, c3.id, r1.id, r2.id, l1.id, l2.id};
  auto h = passes::eliminate_common_subexpressions(g);
  const auto& o = h->outputs;
  EXPECT_EQ(o[0], o[1]);
  EXPECT_NE(o[0], o[2]);  // add(y, x): operands differ (commutativity is rewrite's business)
  EXPECT_EQ(o[3], o[4]);
  EXPECT_NE(o[3], o[5]);  // -0.0 differs from 0.0
  EXPECT_NE(o[6], o[7]);  // random draws stay separate nodes
  EXPECT_NE(o[8], o[9]);  // attributes compared bit for bit
  expect_bit_equal(run_outputs(g, {{"x", Array::from<double>({2}, {1, -2})}, {"y", Array::from<double>({2}, {3, 4})}}),
                   run_outputs(*h, {{"x", Array::from<double>({2}, {1, -2})}, {"y", Array::from<double>({2}, {3, 4})}}),
                   "cse");
}

TEST(Dce, DropsDeadNodesKeepsEveryInputAndOutputOrder) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value unused = g.add_input("unused", Type{f64, {2}});
  ir::Value dead = ir::exp(ir::exp(x));
  ir::Value y = ir::neg(x);
  g.outputs = {y.id, x.id, y.id};
  g.output_names = {"y", "x", "again"};
  auto h = passes::eliminate_dead_code(g);
  EXPECT_EQ(h->size(), 3u) << ir::to_text(*h);
  EXPECT_TRUE(h->input("unused").valid());
  EXPECT_EQ(h->output_names, g.output_names);
  EXPECT_EQ(h->node(h->outputs[0]).op_name(), "neg");
  EXPECT_EQ(h->outputs[0], h->outputs[2]);
  (void)unused;
  (void)dead;
}

}  // namespace
}  // namespace mg
