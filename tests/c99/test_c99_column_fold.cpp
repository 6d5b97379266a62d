// The C99 fold over leading axes (a bias gradient's column sum), written as blocks of
// contiguous outputs folded a row at a time: every plain fold (sum, mean, prod, max, min),
// f32, f64 and i64, one block and several with a short tail, keepdim, NaN propagation in
// max, agrees with the interpreter; the row-block loop is what was emitted.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using mg::testing::randn;

struct FoldCase {
  const char* op;
  DType dt;
  Shape shape;
  I64List axes;
  bool keepdim;
};

TEST(C99ColumnFold, LeadingAxesAgreeWithTheInterpreter) {
  const FoldCase cases[] = {
      {"reduce_sum", f32, {128, 300}, {0}, false},  // several blocks, the last 44 wide
      {"reduce_mean", f32, {3, 5, 40}, {0, 1}, true},
      {"reduce_max", f32, {7, 20}, {0}, false},
      {"reduce_min", f64, {9, 16}, {0}, false},
      {"reduce_prod", f64, {4, 33}, {0}, false},
      {"reduce_sum", i64, {6, 17}, {0}, false},
  };
  for (const FoldCase& c : cases) {
    ir::Graph g;
    ir::Value x = g.add_input("x", Type{c.dt, c.shape});
    g.outputs = {ir::reduce(c.op, x, c.axes, c.keepdim).id};
    Array a = randn(Type{c.dt, c.shape}, 3);
    if (std::string(c.op) == "reduce_max") a.set(2 * 20 + 5, NAN);  // column 5 is NaN
    const rt::Bindings in{{"x", a}};
    rt::c99::Options o;
    o.standalone = false;
    const std::string src = rt::c99::emit_module(g, g.outputs, {}, o).source;
    EXPECT_NE(src.find("acc[j]"), std::string::npos) << c.op << "\n" << src;
    const Array want = rt::compile(g, g.outputs).run(in)[0];
    const Array got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in)[0];
    ASSERT_EQ(to_string(want.type()), to_string(got.type())) << c.op;
    const double tol = c.dt == f64 ? 1e-12 : c.dt == f32 ? 16 * FLT_EPSILON : 0.0;
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      if (std::isnan(want.at(i))) {
        EXPECT_TRUE(std::isnan(got.at(i))) << c.op << " element " << i;
        continue;
      }
      ASSERT_LE(std::abs(got.at(i) - want.at(i)), tol * std::max(1.0, std::abs(want.at(i)))) << c.op << " element " << i;
    }
  }
}

// Reduced axes that are one run in memory fold as one loop (a conv bias gradient over
// [N, C, H, W]: runs of H*W), in the same element order; axes apart stay loops of their own.
TEST(C99ColumnFold, ContiguousReducedAxesAreOneLoop) {
  struct Merged {
    FoldCase c;
    const char* loop;  // the emitted loop over the merged run
  };
  const Merged cases[] = {
      {{"reduce_sum", f32, {6, 4, 7, 5}, {0, 2, 3}, false}, "r1 < 35;"},
      {{"reduce_max", f64, {3, 4, 5}, {1, 2}, true}, "r0 < 20;"},
      {{"reduce_mean", f32, {2, 3, 1, 4, 5}, {1, 2, 3}, false}, "r0 < 12;"},  // a size-1 axis between
      {{"reduce_prod", f64, {4, 3, 5}, {0, 2}, false}, "r1 < 5;"},            // not one run: two loops
  };
  for (const Merged& m : cases) {
    const FoldCase& c = m.c;
    ir::Graph g;
    ir::Value x = g.add_input("x", Type{c.dt, c.shape});
    g.outputs = {ir::reduce(c.op, x, c.axes, c.keepdim).id};
    Array a = randn(Type{c.dt, c.shape}, 5);
    if (std::string(c.op) == "reduce_max") a.set(7, NAN);  // the first output's run holds a NaN
    const rt::Bindings in{{"x", a}};
    rt::c99::Options o;
    o.standalone = false;
    const std::string src = rt::c99::emit_module(g, g.outputs, {}, o).source;
    EXPECT_NE(src.find(m.loop), std::string::npos) << c.op << "\n" << src;
    const Array want = rt::compile(g, g.outputs).run(in)[0];
    const Array got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in)[0];
    ASSERT_EQ(to_string(want.type()), to_string(got.type())) << c.op;
    const double tol = c.dt == f64 ? 1e-12 : 16 * FLT_EPSILON;
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      if (std::isnan(want.at(i))) {
        EXPECT_TRUE(std::isnan(got.at(i))) << c.op << " element " << i;
        continue;
      }
      ASSERT_LE(std::abs(got.at(i) - want.at(i)), tol * std::max(1.0, std::abs(want.at(i)))) << c.op << " element " << i;
    }
  }
}

}  // namespace
}  // namespace mg
