// Reduction fusion (fuse_elementwise, `fused` kind "reduce"): a plain-fold reduction
// (sum, mean, max, min, prod) whose elementwise producer nothing else reads becomes one
// node that folds the producer's values as it computes them. Results are bit-identical to
// the unfused graph for every reduced-axes layout the fold kernel distinguishes (full
// reductions split across threads, rows, leading axes with contiguous and strided rows,
// outputs wider than a window), both float dtypes and i64; shared producers stay unfused;
// the node prints, parses back and verifies; random graphs fuse reductions.
#include <gtest/gtest.h>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/passes/pass_test_util.hpp"

namespace mg {
namespace {

using testing::count_op;
using testing::expect_bit_equal;
using testing::randn;
using testing::run_outputs;

std::size_t count_fused(const ir::Graph& g, std::string_view kind) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id)
    n += g.node(id).op_name() == "fused" && g.node(id).attrs.str("kind") == kind;
  return n;
}

// reduce(op, tanh(a) * b + a, axes) for a, b of `shape`: fuses into one node, same bits.
void expect_fuses_bit_exact(const char* op, const Shape& shape, const I64List& axes, DType dt, bool keepdim = false) {
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{dt, shape});
  ir::Value b = g.add_input("b", Type{dt, shape});
  ir::Value p = dt == i64 ? ir::add(ir::mul(a, b), a) : ir::add(ir::mul(ir::tanh(a), b), a);
  ir::Value r = ir::reduce(op, p, axes, keepdim);
  g.outputs = {r.id};
  std::string what = std::string(op) + " " + to_string(Type{dt, shape}) + " axes " + ir::format_attr(AttrValue{axes});
  auto f = passes::fuse_elementwise(g);
  ASSERT_NO_THROW(ir::verify(*f)) << what;
  EXPECT_EQ(count_fused(*f, "reduce"), 1u) << what << "\n" << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, op), 0u) << what << ": the reduction is inside the fused node";
  EXPECT_EQ(f->size(), 3u) << what << "\n" << ir::to_text(*f);  // a, b and the fused node
  rt::Bindings in{{"a", randn(Type{dt, shape}, 1)}, {"b", randn(Type{dt, shape}, 2)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), what);
}

TEST(ReduceFusion, EveryAxesLayoutIsBitExact) {
  struct Case {
    Shape shape;
    I64List axes;
  };
  const Case cases[] = {
      {{5, 7}, {0, 1}},             // a full reduction of one window
      {{300, 700}, {0, 1}},         // full, 210000 elements: split across threads, many windows
      {{37, 1000}, {1}},            // rows (inner == 1), runs crossing windows
      {{3, 5000}, {1}},             // long rows
      {{128, 130}, {0}},            // sum-to-shape of a bias gradient: contiguous rows, batched
      {{3, 5000}, {0}},             // outputs wider than a window
      {{4, 6, 5, 9}, {0, 2}},       // strided rows (inner > 1)
      {{6, 50, 70}, {1}},           // a middle axis
      {{2, 3, 4}, {}},              // reduce nothing
      {{0, 4}, {0}},                // an empty extent
  };
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"})
    for (const Case& c : cases)
      for (DType dt : {f64, f32}) expect_fuses_bit_exact(op, c.shape, c.axes, dt);
  expect_fuses_bit_exact("reduce_sum", {40, 30}, {1}, f64, true);  // keepdim
  expect_fuses_bit_exact("reduce_sum", {300, 700}, {0, 1}, i64);    // wrapping i64 sums
  expect_fuses_bit_exact("reduce_max", {37, 1000}, {1}, i64);
}

// The loss and softmax shapes: mean((a-b)^2), sum(x*y), the sum of exp(x - max).
TEST(ReduceFusion, LossesAndSoftmaxPartsFuse) {
  ir::Graph g;
  const Shape s{64, 10};
  ir::Value a = g.add_input("a", Type{f32, s});
  ir::Value b = g.add_input("b", Type{f32, s});
  ir::Value mse = ir::reduce("reduce_mean", ir::square(ir::sub(a, b)), {0, 1}, false);
  ir::Value dot = ir::reduce_sum(ir::mul(a, b), {0, 1}, false);
  ir::Value m = ir::reduce("reduce_max", a, {1}, true);  // reads a parameter: nothing to fuse
  ir::Value se = ir::reduce_sum(ir::exp(ir::sub(a, ir::broadcast_to(m, s))), {1}, true);
  g.outputs = {mse.id, dot.id, se.id};
  auto f = passes::run_pipeline(g, "fold,cse,fuse,dce").graph;
  EXPECT_EQ(count_fused(*f, "reduce"), 3u) << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, "reduce_max"), 1u) << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, "exp"), 0u) << ir::to_text(*f);
  rt::Bindings in{{"a", randn(Type{f32, s}, 3)}, {"b", randn(Type{f32, s}, 4)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "losses");
  rt::Executable before = rt::compile(g, g.outputs), after = rt::compile(*f, f->outputs);
  EXPECT_LT(after.peak_bytes(), before.peak_bytes()) << "the reduced values are never stored";
}

// Where it does not pay: a producer read by something else is stored anyway.
TEST(ReduceFusion, SharedProducersStayUnfused) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {8, 9}});
  ir::Value t = ir::tanh(ir::neg(x));
  ir::Value s = ir::reduce_sum(t, {1}, false);
  g.outputs = {s.id, t.id};
  auto f = passes::fuse_elementwise(g);
  EXPECT_EQ(count_fused(*f, "reduce"), 0u) << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, "reduce_sum"), 1u);
  rt::Bindings in{{"x", randn(Type{f64, {8, 9}}, 5)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "shared producer");
  // logsumexp and var are not plain folds: never fused.
  ir::Graph h;
  ir::Value y = h.add_input("y", Type{f64, {8, 9}});
  h.outputs = {ir::reduce("logsumexp", ir::tanh(y), {1}, false).id};
  EXPECT_EQ(count_fused(*passes::fuse_elementwise(h), "reduce"), 0u);
}

TEST(ReduceFusion, PrintsParsesAndVerifies) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4, 6}});
  ir::Value b = g.add_input("b", Type{f64, {6}});
  ir::Value y = ir::reduce("reduce_mean", ir::square(ir::sub(x, ir::broadcast_to(b, {4, 6}))), {0}, true);
  g.outputs = {y.id};
  g.output_names = {"y"};
  auto f = passes::fuse_elementwise(g);
  const std::string text = ir::to_text(*f);
  EXPECT_NE(text.find("fused(%b, %x) {dtype = f64, kind = \"reduce\", shape = [1, 6]}"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce_mean("), std::string::npos) << text;
  auto p = ir::parse(text, "fused_reduce.mgir");
  EXPECT_EQ(ir::to_text(*p), text);
  rt::Bindings in{{"x", randn(Type{f64, {4, 6}}, 6)}, {"b", randn(Type{f64, {6}}, 7)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*p, in), "parsed");
  EXPECT_EQ(ir::to_text(*passes::fuse_elementwise(*f)), text) << "idempotent";

  auto body = [](const std::string& last, const std::string& type) {
    return "graph(%x: f64[2,3]) {\n  %1 = fused(%x) {dtype = f64, kind = \"reduce\", shape = [3]} : " + type +
           "\n    region(%a0: f64[2,3]) {\n      %1 = exp(%a0) : f64[2,3]\n" + last + "    }\n  return %1\n}\n";
  };
  EXPECT_NO_THROW(ir::parse(body("      %2 = reduce_sum(%1) {axes = [0]} : f64[3]\n      return %2\n", "f64[3]")));
  // Not a plain fold, no reduction at the end, a reduction of another type.
  EXPECT_THROW(ir::parse(body("      %2 = logsumexp(%1) {axes = [0]} : f64[3]\n      return %2\n", "f64[3]")), ParseError);
  EXPECT_THROW(ir::parse(body("      return %1\n", "f64[3]")), ParseError);
  EXPECT_THROW(ir::parse(body("      %2 = reduce_sum(%1) {axes = [1]} : f64[2]\n      return %2\n", "f64[3]")),
               ParseError);
}

// The random graphs of the pass tests (which check every pass for results and
// idempotence) do exercise reduction fusion.
TEST(ReduceFusion, RandomGraphsFuseReductionsBitExact) {
  int fused = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    testing::RandomGraph r = testing::random_graph(seed, 30, 33, 130);
    auto f = passes::run_pipeline(*r.g, "fold,cse,fuse,dce").graph;
    fused += static_cast<int>(count_fused(*f, "reduce"));
    expect_bit_equal(run_outputs(*r.g, r.inputs), run_outputs(*f, r.inputs), "seed " + std::to_string(seed));
    EXPECT_EQ(ir::to_text(*passes::fuse_elementwise(*f)), ir::to_text(*f)) << "seed " << seed << " idempotent";
  }
  EXPECT_GE(fused, 20);
}

}  // namespace
}  // namespace mg
