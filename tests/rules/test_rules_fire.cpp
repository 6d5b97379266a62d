// Each rule fires on its `start => goal` example (passes/rules/examples.cpp): rewriting
// start prints exactly as goal, values are preserved (bit for bit for exact and structural
// rules, on inputs with -0, ±inf and NaN; to a tolerance for real ones), a real rule never
// fires in strict mode, and rewriting is idempotent. Then random graphs and a gradient
// graph go through the interpreter before and after.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/rewrite.hpp"
#include "minigrad/passes/rules/examples.hpp"
#include "minigrad/passes/rules/rule.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using passes::RewriteMode;
using passes::RewriteOptions;
using passes::rules::Example;
using passes::rules::Label;

std::string text(const ir::Graph& g) {
  ir::PrintOptions o;
  o.locations = false;
  return ir::to_text(g, {}, o);
}

Array sample(const Type& t, std::uint64_t seed, bool specials) {
  static const double kSpecial[] = {-0.0, INFINITY, -INFINITY, NAN, 0.0, 1e-40};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    double v = u(rng) * (rng() % 2 ? 1 : -1);
    if (!specials) v = std::abs(v);
    if (specials && rng() % 3 == 0) v = kSpecial[rng() % 6];
    if (t.dtype == DType::boolean) v = rng() % 2;
    a.set(i, v);
  }
  return a;
}

std::vector<Array> run(const ir::Graph& g, const rt::Bindings& b) { return rt::compile(g, g.outputs).run(b); }

rt::Bindings bind(const ir::Graph& g, std::uint64_t seed, bool specials) {
  rt::Bindings b;
  for (ir::NodeId id : g.inputs()) b[g.node(id).name] = sample(g.node(id).type, seed + id, specials);
  return b;
}

// Bitwise equal, NaNs of any payload equal.
void expect_same_values(const std::vector<Array>& want, const std::vector<Array>& got, bool bitwise,
                        const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].type(), got[o].type()) << what;
    for (std::int64_t i = 0; i < want[o].numel(); ++i) {
      double x = want[o].at(i), y = got[o].at(i);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (!bitwise && !std::isfinite(x)) continue;  // a real rule says nothing about inf/NaN
      if (bitwise) {
        EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << what << " output " << o << " element " << i << ": " << x
                                                     << " vs " << y;
      } else {
        EXPECT_NEAR(x, y, 1e-4 * (1 + std::abs(x))) << what << " output " << o << " element " << i;
      }
    }
  }
}

class RuleExample : public ::testing::TestWithParam<Example> {};

TEST_P(RuleExample, FiresAndPrintsTheGoal) {
  const Example& e = GetParam();
  const auto* rule = passes::rules::shipped_rules().find(e.rule);
  ASSERT_NE(rule, nullptr);
  auto gs = passes::rules::build_example(e);
  RewriteOptions opt;
  opt.mode = rule->declared == Label::real ? RewriteMode::fast_math : RewriteMode::strict;
  auto rw = passes::rewrite(*gs.start, {}, opt);
  ir::verify(*rw.graph);
  EXPECT_TRUE(rw.stats.by_rule.count(e.rule)) << e.start << " did not fire " << e.rule << "; got\n" << text(*rw.graph);
  EXPECT_EQ(text(*rw.graph), text(*gs.goal)) << "start:\n" << text(*gs.start);

  // values: bit for bit (with specials) unless the rule is real
  const bool bitwise = rule->declared != Label::real;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    rt::Bindings b = bind(*gs.start, seed, bitwise);
    expect_same_values(run(*gs.start, b), run(*rw.graph, b), bitwise, e.start);
  }
  // idempotent
  auto again = passes::rewrite(*rw.graph, {}, opt);
  EXPECT_EQ(again.stats.rewrites, 0u) << text(*rw.graph);
  EXPECT_EQ(text(*again.graph), text(*rw.graph));
  // a fast-math rule stays off in strict mode
  if (rule->declared == Label::real) {
    auto strict = passes::rewrite(*gs.start, {}, RewriteOptions{});
    EXPECT_FALSE(strict.stats.by_rule.count(e.rule));
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleExample, ::testing::ValuesIn(passes::rules::examples()),
                         [](const auto& info) {
                           std::string n = info.param.rule + "_" + std::to_string(info.index);
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Rewrite, LogSaysWhichRuleFiredWhere) {
  auto g = ir::parse(R"(graph(%x: f32[3]) {
  %1 = neg(%x) : f32[3]  loc("m.cpp":3:1)
  %2 = neg(%1) : f32[3]  loc("m.cpp":4:1)
  %3 = full() {dtype = f32, shape = [3], value = 1.0} : f32[3]
  %4 = mul(%3, %2) : f32[3]  loc("m.cpp":5:1)
  return y = %4
})");
  auto rw = passes::rewrite(*g);
  ASSERT_EQ(rw.log.size(), 2u);
  EXPECT_EQ(rw.log[0].rule, "neg-neg");
  EXPECT_EQ(rw.log[0].loc.line, 4u);
  EXPECT_EQ(rw.log[1].rule, "mul-one");  // commutative: 1 * x matches (mul ?x 1)
  EXPECT_EQ(rw.log[1].loc.line, 5u);
  EXPECT_EQ(text(*rw.graph), "graph(%x: f32[3]) {\n  return y = %x\n}\n");
  EXPECT_EQ(rw.stats.nodes_before, 5u);
  EXPECT_EQ(rw.stats.nodes_after, 1u);
}

TEST(Rewrite, SplatConstantsMatchThroughBroadcastAndReshape) {
  // what the grad pass makes of a seed: broadcast_to(reshape(full 1)) * g
  auto g = ir::parse(R"(graph(%g: f32[2,3]) {
  %1 = full() {dtype = f32, shape = [], value = 1.0} : f32[]
  %2 = reshape(%1) {shape = [1, 1]} : f32[1,1]
  %3 = broadcast_to(%2) {shape = [2, 3]} : f32[2,3]
  %4 = mul(%3, %g) : f32[2,3]
  return y = %4
})");
  auto rw = passes::rewrite(*g);
  EXPECT_EQ(text(*rw.graph), "graph(%g: f32[2,3]) {\n  return y = %g\n}\n");
}

TEST(Rewrite, ZeroPatternMatchesPositiveZeroOnly) {
  auto g = ir::parse(R"(graph(%x: f32[3]) {
  %1 = full() {dtype = f32, shape = [3], value = -0.0} : f32[3]
  %2 = add(%x, %1) : f32[3]
  %3 = full() {dtype = f32, shape = [3], value = 0.0} : f32[3]
  %4 = add(%x, %3) : f32[3]
  return a = %2, b = %4
})");
  auto strict = passes::rewrite(*g);
  EXPECT_EQ(strict.stats.by_rule.count("add-neg-zero"), 1u);
  EXPECT_EQ(strict.stats.by_rule.count("add-zero"), 0u);  // x + 0 is not x for x = -0
  RewriteOptions fm;
  fm.mode = RewriteMode::fast_math;
  EXPECT_EQ(passes::rewrite(*g, {}, fm).stats.by_rule.count("add-zero"), 1u);
}

TEST(Rewrite, IntegerArithmeticIsLeftAlone) {
  auto g = ir::parse(R"(graph(%x: i64[3]) {
  %1 = sub(%x, %x) : i64[3]
  %2 = neg(%1) : i64[3]
  %3 = neg(%2) : i64[3]
  return y = %3
})");
  RewriteOptions fm;
  fm.mode = RewriteMode::fast_math;
  EXPECT_EQ(passes::rewrite(*g, {}, fm).stats.rewrites, 0u);
}

TEST(Rewrite, LoopDetectionCutsACyclingRuleSet) {
  auto rs = passes::rules::parse_rules(R"(rule "swap" [exact]: (add ?x ?y) => (add ?y ?x);)");
  auto g = ir::parse("graph(%a: f32[3], %b: f32[3]) {\n  %2 = add(%a, %b) : f32[3]\n  return y = %2\n}");
  RewriteOptions opt;
  opt.rules = &rs;
  opt.max_depth = 8;
  auto rw = passes::rewrite(*g, {}, opt);
  EXPECT_GE(rw.stats.loops_cut, 1u);
  ir::verify(*rw.graph);
}

// Random elementwise/shape graphs with shared operands and telling constants.
std::unique_ptr<ir::Graph> random_graph(std::uint64_t seed, int ops) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  auto g = std::make_unique<ir::Graph>();
  const DType dt = seed % 2 ? f32 : f64;
  const Shape s{2, 3};
  std::vector<ir::Value> pool;
  for (int i = 0; i < 3; ++i) pool.push_back(g->add_input("x" + std::to_string(i), Type{dt, s}));
  const char* unary[] = {"neg", "abs", "square", "sqrt", "exp", "log", "reciprocal", "relu", "tanh"};
  const char* binary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
  const double consts[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5};
  for (int k = 0; k < ops; ++k) {
    ir::Value a = pool[pool.size() - 1 - pick(std::min<std::size_t>(pool.size(), 4))];
    ir::Value b = pool[pick(pool.size())];
    ir::Value v;
    switch (pick(7)) {
      case 0: case 1: v = ir::unary(unary[pick(std::size(unary))], a); break;
      case 2: v = ir::binary(binary[pick(std::size(binary))], a, b); break;
      case 3: v = ir::binary(binary[pick(std::size(binary))], a, a); break;
      case 4: v = ir::binary(binary[pick(std::size(binary))], a, ir::full(*g, a.type(), consts[pick(6)])); break;
      case 5: v = ir::permute(ir::permute(a, {1, 0}), {1, 0}); break;
      case 6: v = ir::reshape(ir::reshape(a, {6}), s); break;
    }
    pool.push_back(v);
  }
  g->outputs = {pool.back().id, pool[pool.size() / 2].id};
  return g;
}

TEST(Rewrite, RandomGraphsKeepTheirValuesBitForBitInStrictMode) {
  std::size_t fired = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    auto g = random_graph(seed, 25);
    auto rw = passes::rewrite(*g);
    ir::verify(*rw.graph);
    fired += rw.stats.rewrites;
    for (std::uint64_t s = 0; s < 2; ++s) {
      rt::Bindings b = bind(*g, seed * 10 + s, true);
      expect_same_values(run(*g, b), run(*rw.graph, b), true, "seed " + std::to_string(seed) + "\n" + text(*g));
    }
    EXPECT_EQ(passes::rewrite(*rw.graph).stats.rewrites, 0u) << "not idempotent, seed " << seed;
  }
  EXPECT_GT(fired, 60u);  // the generator does exercise the rules
}

TEST(Rewrite, RandomGraphsStayCloseInFastMath) {
  RewriteOptions fm;
  fm.mode = RewriteMode::fast_math;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    auto g = random_graph(seed, 12);
    auto rw = passes::rewrite(*g, {}, fm);
    ir::verify(*rw.graph);
    rt::Bindings b = bind(*g, seed, false);  // positive, finite inputs in [0.5, 2]
    auto before = run(*g, b), after = run(*rw.graph, b);
    for (std::size_t o = 0; o < before.size(); ++o)
      for (std::int64_t i = 0; i < before[o].numel(); ++i) {
        double x = before[o].at(i), y = after[o].at(i);
        if (!std::isfinite(x)) continue;  // fast math may turn inf - inf into 0
        EXPECT_NEAR(x, y, 1e-3 * (1 + std::abs(x))) << "seed " << seed << "\n" << text(*g) << "\n" << text(*rw.graph);
      }
    EXPECT_EQ(passes::rewrite(*rw.graph, {}, fm).stats.rewrites, 0u) << "not idempotent, seed " << seed;
  }
}

TEST(Rewrite, GradientGraphShrinksAndKeepsItsValues) {
  // loss = sum(tanh(x @ w + b) * 0.5) (tests/tools/data/mlp_loss.mgir) and its gradients
  auto g = ir::parse(R"(graph(%x: f64[2,3], %w: f64[3,4], %b: f64[4]) {
  %3 = matmul(%x, %w) : f64[2,4]
  %4 = broadcast_to(%b) {shape = [2, 4]} : f64[2,4]
  %5 = add(%3, %4) : f64[2,4]
  %6 = tanh(%5) : f64[2,4]
  %7 = constant 0.5 : f64[2,4]
  %8 = mul(%6, %7) : f64[2,4]
  %9 = reduce_sum(%8) {axes = [0, 1], keepdim = false} : f64[]
  return loss = %9
})");
  std::vector<ir::Value> wrt;
  for (ir::NodeId id : g->inputs()) wrt.push_back(g->value(id));
  auto grads = passes::grad(g->value(g->outputs[0]), wrt);
  for (auto& v : grads) g->outputs.push_back(v.id);
  g->output_names.resize(1);
  auto rw = passes::rewrite(*g);
  ir::verify(*rw.graph);
  EXPECT_LT(rw.stats.nodes_after, rw.stats.nodes_before) << text(*rw.graph);
  rt::Bindings b = bind(*g, 7, false);
  expect_same_values(run(*g, b), run(*rw.graph, b), true, "mlp gradient");
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

TEST(Rewrite, UnitReshapeRuleKeepsColumnBroadcasts) {
  // [3] -> [3,1] -> [3,3] broadcasts down columns; broadcasting [3] directly would go along
  // rows, so the rule must not fire (same types, different values).
  auto g = ir::parse(R"(graph(%x: f32[3]) {
  %1 = reshape(%x) {shape = [3, 1]} : f32[3,1]
  %2 = broadcast_to(%1) {shape = [3, 3]} : f32[3,3]
  return y = %2
})");
  EXPECT_EQ(passes::rewrite(*g).stats.rewrites, 0u);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

TEST(Rewrite, SumOfBroadcastOnlyOverTheCopiedAxes) {
  // Summing x's copies (axis 0) is x * 3; summing along x's own axis (axis 1, the same
  // types) is sum(x) in every row, so the rule must not fire there.
  auto g = ir::parse(R"(graph(%x: f32[3]) {
  %1 = broadcast_to(%x) {shape = [3, 3]} : f32[3,3]
  %2 = reduce_sum(%1) {axes = [0]} : f32[3]
  %3 = reduce_sum(%1) {axes = [1]} : f32[3]
  %4 = reduce_mean(%1) {axes = [0]} : f32[3]
  return copies = %2, rows = %3, mean = %4
})");
  RewriteOptions opt;
  opt.mode = RewriteMode::fast_math;
  auto rw = passes::rewrite(*g, {}, opt);
  EXPECT_EQ(rw.stats.by_rule["sum-broadcast"], 1u) << text(*rw.graph);
  EXPECT_EQ(rw.stats.by_rule["mean-broadcast"], 1u) << text(*rw.graph);
  EXPECT_EQ(rw.stats.rewrites, 2u) << text(*rw.graph);
  EXPECT_NE(text(*rw.graph).find("mul(%x"), std::string::npos) << text(*rw.graph);
  rt::Bindings b = bind(*g, 3, false);
  expect_same_values(run(*g, b), run(*rw.graph, b), false, "sum of broadcast");
  EXPECT_EQ(passes::rewrite(*g).stats.rewrites, 0u) << "a real rule: fast math only";
}

}  // namespace
}  // namespace mg
